// Package requestid makes the id erpgate gives every MCP reply
// (X-Request-Id, and the request_id of its usage event) and reads back
// when it was made.
//
// An id is 24 lowercase hex digits: the first 12 are the Unix time in
// milliseconds, the other 12 are random. A person quotes it when a call
// went wrong; the time in it lets the usage viewer find that call's event
// among the few minutes after it, by the time indexes usage_events already
// has, instead of an index of its own that every stored event would pay
// for.
package requestid

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
)

// Len is the length of an id.
const Len = 24

// New returns a new id made at now.
func New(now time.Time) string {
	var b [12]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint64(b[:8], ms<<16) // 48 bits of milliseconds first
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}

// Time returns when id was made. ok is false for anything New does not
// make: another length, a letter that is not lowercase hex, or a time
// before 2020 or after 2200 (an id from before erpgate's ids carried
// their time is random, and reads as such a time most of the time, or as
// some other instant; a caller treats the time as a hint, never as proof).
func Time(id string) (t time.Time, ok bool) {
	if len(id) != Len || strings.ToLower(id) != id {
		return time.Time{}, false
	}
	b, err := hex.DecodeString(id)
	if err != nil {
		return time.Time{}, false
	}
	t = time.UnixMilli(int64(binary.BigEndian.Uint64(b[:8]) >> 16)).UTC()
	if t.Before(earliest) || t.After(latest) {
		return time.Time{}, false
	}
	return t, true
}

var (
	earliest = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)
