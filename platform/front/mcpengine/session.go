package mcpengine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// Session is what a front door establishes for one HTTP request: who is
// calling, on which site, and how to authorise upstream requests.
type Session struct {
	Site      connector.Site
	Principal connector.Principal
	// Authorizer adds the caller's ERP credentials to upstream requests.
	Authorizer connector.Authorizer
	// ErrorsAsResults delivers tool failures as normal results with
	// {status:"error", ok:false, error:{…}} (X-MCP-Error-Format: result).
	ErrorsAsResults bool
	// LimitKey identifies the caller for per-user limits, such as
	// "service:<token id>" or "user:<erp user>".
	LimitKey string
	// ClientID names the MCP client for the usage event: the OAuth client
	// id, or the service token's id.
	ClientID string
}

// How far a tool call got with the caller's limits (requestState.limits).
const (
	limitsUnreached uint32 = iota
	limitsReached
	limitsRefused
)

// requestState travels in the context of one MCP request.
type requestState struct {
	session Session
	id      string
	// slot is the request's admission slot, given back while a tool call
	// waits on the ERP.
	slot *callSlot
	// replyTimeout bounds how long the client may take to take in a
	// reply whose work is done (writeReply), or each write of an event
	// stream (replyWriter.eventDeadline); 0 for none.
	replyTimeout time.Duration
	// limits is how far a tool call got with the caller's limits:
	// limitsUnreached, limitsReached, or limitsRefused (RATE_LIMITED by
	// the Limiter). Calls that were refused, before the limits or by
	// them, are charged to the caller's budget of refused calls.
	limits atomic.Uint32

	// started is when the request's body had been read.
	started time.Time
	// deadline is the request's arrival plus the budget: its call ends by
	// then, as its waits at the door and for a work slot did (zero: the
	// budget from when the call starts).
	deadline time.Time
	// reply is the writer mcp-go's transport writes the reply to; nil when
	// the engine writes it itself.
	reply *replyWriter
	// header is the HTTP request's; meta is the _meta of a 2026-07-28
	// write call served on the direct path (writes.go reads both).
	header http.Header
	meta   json.RawMessage
	// idSent is the request's id as sent when mcp-go saw idStandIn in its
	// place (a whole number it would not echo as sent: standInID).
	idSent, idStandIn []byte

	mu     sync.Mutex
	method string
	tool   string
	// metrics are the series of the tool called, once known.
	metrics   *metrics.Tool
	outcome   usage.Outcome
	errorCode string
	// approval is the write's approval stage for the usage event.
	approval string
	// redactedCount and redactedFields say what redaction took out of the
	// result, for the usage event.
	redactedCount  int
	redactedFields string
	// erpOpen counts the requests now with the ERP, erpSince is when the
	// first of them was sent, and erpTime the time with the ERP before it:
	// overlapping requests count once.
	erpOpen  int
	erpSince time.Time
	erpTime  time.Duration
	// plainError is erpgate's answer for the error mcp-go's server
	// returned, when onProtocolError could tell what went wrong
	// (protoerr.go).
	plainError *rpcError
}

type stateKey struct{}

func withState(ctx context.Context, st *requestState) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

func (st *requestState) setOutcome(o usage.Outcome, code string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.outcome, st.errorCode = o, code
}

func (st *requestState) snapshot() (tool string, o usage.Outcome, code, approval string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tool, st.outcome, st.errorCode, st.approval
}

// setRedacted records what redaction took out of the result: count
// values, at paths (some of them: redact.Redacted).
func (st *requestState) setRedacted(count int, paths []string) {
	fields := usage.RedactedFields(paths)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.redactedCount, st.redactedFields = count, fields
}

func (st *requestState) redacted() (count int, fields string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.redactedCount, st.redactedFields
}

// erpBegin marks a request sent to the ERP.
func (st *requestState) erpBegin(now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.erpOpen == 0 {
		st.erpSince = now
	}
	st.erpOpen++
}

// erpEnd marks a request's answer read (or its failure).
func (st *requestState) erpEnd(now time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.erpOpen--
	if st.erpOpen == 0 {
		st.erpTime += now.Sub(st.erpSince)
	}
}

// erpDuration is the time the request spent with the ERP so far: from
// sending a request to having read its answer, overlapping requests
// counted once.
func (st *requestState) erpDuration(now time.Time) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	d := st.erpTime
	if st.erpOpen > 0 {
		d += now.Sub(st.erpSince)
	}
	return d
}

// appendServerTiming appends a Server-Timing header value: the time with
// the ERP ("erp") and the time from having read the request to now
// ("total"), in milliseconds. What erpgate itself added to a call, beyond
// the network, is total minus erp.
func (st *requestState) appendServerTiming(dst []byte, now time.Time) []byte {
	dst = append(dst, "erp;dur="...)
	dst = appendMillis(dst, st.erpDuration(now))
	dst = append(dst, ", total;dur="...)
	return appendMillis(dst, now.Sub(st.started))
}

// appendMillis appends d in milliseconds with three decimals (to the
// microsecond).
func appendMillis(dst []byte, d time.Duration) []byte {
	us := max(d.Microseconds(), 0)
	dst = strconv.AppendInt(dst, us/1000, 10)
	frac := us % 1000
	dst = append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return dst
}

// restoreID returns out, replies to the request, with the id the request
// was sent with where the stand-in mcp-go saw was written (standInID).
func (st *requestState) restoreID(out []byte) []byte {
	if st == nil || st.idSent == nil || !bytes.Contains(out, st.idStandIn) {
		return out
	}
	return bytes.ReplaceAll(out, st.idStandIn, st.idSent)
}
