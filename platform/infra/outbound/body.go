package outbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// boundedBody fails with RESPONSE_TOO_LARGE once more than limit bytes have
// been read, so no caller ever buffers an unbounded upstream body.
type boundedBody struct {
	rc        io.ReadCloser
	remaining int64
	limit     int64
	// paused is the part of remaining held back by PrefetchCharged: once
	// the rest is read, Read stops with errPaused until it is given back.
	paused int64
}

// errPaused ends a read of a boundedBody that PrefetchCharged paused.
var errPaused = errors.New("outbound: read paused")

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		if b.paused > 0 {
			return 0, errPaused
		}
		// Probe for one more byte: a body of exactly limit bytes is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, tooLarge(b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.rc.Read(p)
	b.remaining -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

func drainAndClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// Prefetch reads resp's whole (bounded) body now and closes it, so that
// its connection goes back to the pool at once, and gives resp a body that
// replays what was read and then the error reading stopped at, if any.
// ReadBody takes the bytes over without copying them. The engine prefetches
// while a call waits for its turn to continue: a waiting call then holds
// the ERP's answer, not a connection. It returns how many bytes it holds
// and, when the read stopped short, why (the body replays that error too).
func Prefetch(resp *http.Response) (int, error) {
	data, err := readAll(resp.Body, resp.ContentLength)
	_ = resp.Body.Close()
	resp.Body = &prefetchedBody{data: data, err: err}
	return len(data), err
}

// PrefetchCharged is Prefetch for a reader that must account for a large
// answer's bytes before it holds them: charge is called with the most the
// answer may be before more than large bytes of it are read, and again,
// with a larger most, before more than the last most are read. An answer
// announced at large bytes or more is charged once, for its length,
// before any of it is read. One of unknown length (chunked, HTTP/2
// without a length, or unpacked from gzip) is charged in steps, the rest
// waiting at the ERP's end of the connection meanwhile: for chargeStep
// times large once its first large bytes are read, and for the response
// bound once it has read that many. A smaller answer is never charged.
// When charge fails the read ends there: the body is closed and replays
// only charge's error, which PrefetchCharged returns too, with 0.
func PrefetchCharged(resp *http.Response, large int64, charge func(most int64) error) (int, error) {
	if resp.ContentLength >= large {
		if err := charge(resp.ContentLength); err != nil {
			return refuseCharge(resp, err)
		}
		return Prefetch(resp)
	}
	if resp.ContentLength >= 0 {
		return Prefetch(resp)
	}
	b, ok := resp.Body.(*boundedBody)
	if !ok {
		// Not the transport's (a test's stand-in): unbounded, so it may
		// be any size.
		b = &boundedBody{rc: resp.Body, remaining: math.MaxInt64, limit: math.MaxInt64}
	}
	// keep is what may still be read before the answer is large.
	keep := large - (b.limit - b.remaining)
	switch {
	case keep <= 0:
		if err := charge(b.limit); err != nil {
			return refuseCharge(resp, err)
		}
		return Prefetch(resp)
	case b.remaining < keep:
		// The bound leaves no room for a large answer.
		return Prefetch(resp)
	}
	b.paused, b.remaining = b.remaining-keep, keep
	data, err := io.ReadAll(b)
	for _, most := range [...]int64{min(chargeStep*large, b.limit), b.limit} {
		if !errors.Is(err, errPaused) {
			break
		}
		if err := charge(most); err != nil {
			return refuseCharge(resp, err)
		}
		data, err = readOn(b, data, most)
	}
	_ = resp.Body.Close()
	resp.Body = &prefetchedBody{data: data, err: err}
	return len(data), err
}

// chargeStep is how many times PrefetchCharged's large an answer of
// unknown length is charged for first; a read that outgrows it pauses
// once more, holding that many bytes, before the rest of the bound.
const chargeStep = 4

// readOn lets b's paused read go on until most bytes of it are read in
// all (it pauses there again) and returns data and what it read joined in
// one buffer of their size: what the call holds is what it was charged
// for.
func readOn(b *boundedBody, data []byte, most int64) ([]byte, error) {
	left := b.remaining + b.paused
	b.remaining = min(left, most-(b.limit-left))
	b.paused = left - b.remaining
	rest, err := io.ReadAll(b)
	return append(data[:len(data):len(data)], rest...), err
}

// refuseCharge ends resp's read with err, charge's refusal.
func refuseCharge(resp *http.Response, err error) (int, error) {
	_ = resp.Body.Close()
	resp.Body = &prefetchedBody{err: err}
	return 0, err
}

// prefetchedBody is a body read by Prefetch.
type prefetchedBody struct {
	data []byte
	off  int
	err  error // what ended the read; nil for the whole body
}

func (b *prefetchedBody) Read(p []byte) (int, error) {
	if b.off < len(b.data) {
		n := copy(p, b.data[b.off:])
		b.off += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *prefetchedBody) Close() error { return nil }

// ReadBody reads a whole (bounded) response body and closes it. Errors keep
// their classification: a body over the bound is RESPONSE_TOO_LARGE, a body
// cut short by the budget is a timeout, a broken connection is
// UPSTREAM_UNAVAILABLE.
func ReadBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var body []byte
	var err error
	if pb, ok := resp.Body.(*prefetchedBody); ok && pb.off == 0 {
		body, err = pb.data, pb.err
		pb.off = len(pb.data)
	} else {
		body, err = readAll(resp.Body, resp.ContentLength)
	}
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return nil, err
		}
		if ctxErr := resp.Request.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the connection to the ERP broke while reading its answer; nothing was returned, which does not mean there are no records")
	}
	return body, nil
}

// readAll reads r to the end. With a known length (the transport already
// refused one over the bound) the buffer is allocated once at its final
// size; io.ReadAll would grow it step by step, copying a large body several
// times and holding about twice its size at the peak.
func readAll(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(r)
	}
	// One spare byte lets the final read see EOF without growing.
	buf := make([]byte, 0, length+1)
	for {
		if len(buf) == cap(buf) {
			// Longer than announced: grow as io.ReadAll does.
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// DecodeJSON reads a response body and decodes it into v. An empty or
// unreadable body is UPSTREAM_INVALID_RESPONSE: it is never "no records".
func DecodeJSON(resp *http.Response, v any) error {
	body, err := ReadBody(resp)
	if err != nil {
		return err
	}
	return UnmarshalJSON(body, v)
}

// UnmarshalJSON decodes an upstream body, which must be one JSON value,
// into v, classifying failures. A body that goes on after its value (an
// error page written after the JSON, a second value) was not read whole:
// it is UPSTREAM_INVALID_RESPONSE, never a complete answer, which could
// be an empty list read as "no records".
func UnmarshalJSON(body []byte, v any) error {
	dec, err := NewJSONDecoder(body)
	if err != nil {
		return err
	}
	if err := dec.Decode(v); err != nil {
		return InvalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return InvalidJSON(errTrailingData)
	}
	return nil
}

// errTrailingData is a body with more after its JSON value.
var errTrailingData = errors.New("the body goes on after its JSON value")

// NewJSONDecoder returns a decoder over an upstream body that keeps numbers
// exactly as the ERP wrote them (json.Number), for decoding a large body
// value by value; an empty body is UPSTREAM_INVALID_RESPONSE.
func NewJSONDecoder(body []byte) (*json.Decoder, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP answered with an empty body; this does not mean there are no records")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return dec, nil
}

// InvalidJSON classifies an error decoding an upstream body:
// UPSTREAM_INVALID_RESPONSE, never "no records".
func InvalidJSON(err error) error {
	return toolerr.Wrap(toolerr.UpstreamInvalidResponse, fmt.Errorf("decode upstream JSON: %w", err),
		"the ERP's answer could not be read as JSON; this does not mean there are no records")
}
