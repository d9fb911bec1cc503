package frappetest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault makes the next matching requests misbehave. Fields combine: Delay
// runs first, then Hang, ResetConnection, Status, Body or BodySize; if none
// of those is set the request is served normally (after Delay, and slowly
// when DripBytesPerSecond is set).
type Fault struct {
	PathPrefix string        // "" = every request
	Times      int           // how many requests it applies to (0 = until cleared)
	Status     int           // respond with this status and a Frappe-shaped error body
	RetryAfter string        // optional Retry-After header
	Hang       bool          // never answer until the client goes away
	Delay      time.Duration // wait before answering
	Body       []byte        // raw body sent with 200 instead (e.g. invalid JSON), or with Status instead of the Frappe-shaped one
	// BodySize streams a syntactically valid JSON body of about this many
	// bytes: {"data":[{...},...]}.
	BodySize int64
	// DripBytesPerSecond sends the body slowly.
	DripBytesPerSecond int
	// ResetConnection hijacks and closes the TCP connection (with RST)
	// without a response.
	ResetConnection bool
}

type faultState struct {
	Fault
	left int // remaining uses; -1 = unlimited
}

// SetFault adds a fault; faults are matched in the order they were set.
func (s *Simulator) SetFault(f Fault) {
	st := &faultState{Fault: f, left: f.Times}
	if f.Times <= 0 {
		st.left = -1
	}
	s.mu.Lock()
	s.faults = append(s.faults, st)
	s.mu.Unlock()
}

// ClearFaults removes every fault.
func (s *Simulator) ClearFaults() {
	s.mu.Lock()
	s.faults = nil
	s.mu.Unlock()
}

// takeFault consumes one use of the first fault matching path.
func (s *Simulator) takeFault(path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if !strings.HasPrefix(path, f.PathPrefix) {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
		}
		cp := f.Fault
		return &cp
	}
	return nil
}

// applyFault performs the fault; it reports whether the response is done.
func (s *Simulator) applyFault(f *Fault, w http.ResponseWriter, r *http.Request) bool {
	ctx := r.Context()
	if f.Delay > 0 && !sleepCtx(ctx, f.Delay) {
		return true
	}
	if f.Hang {
		<-ctx.Done()
		return true
	}
	if f.ResetConnection {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = conn.Close()
				return true
			}
		}
		panic(http.ErrAbortHandler)
	}
	var body []byte
	status := http.StatusOK
	switch {
	case f.Status != 0:
		status = f.Status
		body = f.Body
		if body == nil {
			body = pyJSON(faultError(f.Status).body())
		}
	case f.Body != nil:
		body = f.Body
	case f.BodySize > 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		out := &dripWriter{w: w, ctx: ctx, rate: f.DripBytesPerSecond}
		streamHugeBody(out, f.BodySize)
		return true
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	out := &dripWriter{w: w, ctx: ctx, rate: f.DripBytesPerSecond}
	_, _ = out.Write(body)
	return true
}

// faultError is the Frappe-shaped error body for an injected status.
func faultError(status int) *apiError {
	switch status {
	case 401:
		return bareError("AuthenticationError")
	case 403:
		return bareError("PermissionError")
	case 404:
		return routeNotFound()
	case 417:
		return validationError("Injected validation failure")
	case 429:
		e := frappeThrow("RateLimitExceededError", "You hit the rate limit because of too many requests. Please try after sometime.", "")
		e.status = 429
		return e
	case 503:
		e := frappeThrow("SessionStopped", "Session Stopped", "")
		e.status = 503
		return e
	}
	e := pythonError("pymysql.err.OperationalError", "(2013, 'Lost connection to MySQL server during query')")
	e.status = status
	return e
}

// streamHugeBody writes {"data":[{"name":...},...]} of about size bytes.
func streamHugeBody(w *dripWriter, size int64) {
	written := int64(0)
	write := func(s string) bool {
		n, err := w.Write([]byte(s))
		written += int64(n)
		return err == nil
	}
	if !write(`{"data":[`) {
		return
	}
	for i := 1; written < size-2; i++ {
		sep := ","
		if i == 1 {
			sep = ""
		}
		row := fmt.Sprintf(`%s{"name":"ACC-SINV-2025-%07d","customer":"Bulk Customer %d","grand_total":%d.0,"status":"Paid"}`, sep, i, i%997, i%100000)
		if !write(row) {
			return
		}
	}
	write(`]}`)
}

// dripWriter writes at most rate bytes per second (0 = unlimited),
// flushing as it goes and stopping when the client goes away.
type dripWriter struct {
	w    http.ResponseWriter
	ctx  context.Context
	rate int
}

func (d *dripWriter) Write(p []byte) (int, error) {
	if d.rate <= 0 {
		if err := d.ctx.Err(); err != nil {
			return 0, err
		}
		return d.w.Write(p)
	}
	chunk := d.rate / 10
	if chunk < 1 {
		chunk = 1
	}
	n := 0
	for n < len(p) {
		end := min(n+chunk, len(p))
		m, err := d.w.Write(p[n:end])
		n += m
		if err != nil {
			return n, err
		}
		if fl, ok := d.w.(http.Flusher); ok {
			fl.Flush()
		}
		if !sleepCtx(d.ctx, time.Duration(float64(time.Second)*float64(end-(n-m))/float64(d.rate))) {
			return n, d.ctx.Err()
		}
	}
	return n, nil
}

// bufferedWriter captures a normal response so it can be dripped.
type bufferedWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) drip(w http.ResponseWriter, ctx context.Context, rate int) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	out := &dripWriter{w: w, ctx: ctx, rate: rate}
	_, _ = out.Write(b.buf.Bytes())
}
