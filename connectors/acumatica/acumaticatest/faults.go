package acumaticatest

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault makes matching requests misbehave. Faults apply in the order they
// were set; the first one matching a request's path wins.
type Fault struct {
	// PathPrefix selects requests by URL path prefix ("" = every request).
	PathPrefix string
	// Times limits how many requests the fault affects (0 = unlimited).
	Times int
	// Status is the status code to answer with (default 500 when Body or
	// BodySize is set, otherwise the fault only adds Delay/Hang/Reset).
	Status int
	// Body is the response body (sent as application/json).
	Body string
	// BodySize sends a body of this many filler bytes instead of Body
	// (with Status 200 this is an unreadable "successful" response).
	BodySize int
	// RetryAfter adds a Retry-After header (whole seconds).
	RetryAfter time.Duration
	// Delay is added before the fault (or the normal response) is served.
	Delay time.Duration
	// Hang holds the request open until the client gives up or the
	// server closes.
	Hang bool
	// ResetConnection closes the TCP connection with a reset and no
	// response.
	ResetConnection bool
	// AfterServing runs the request as usual first (a PUT saves), then
	// answers with the fault's status and body instead of the record:
	// Acumatica failing after the save committed (a RowPersisted handler
	// run with TranStatus.Completed, a Persist override after
	// base.Persist, reading the saved record back for the answer).
	AfterServing bool
}

type faultState struct {
	Fault
	used int
}

// SetFault installs a fault.
func (s *Simulator) SetFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultState{Fault: f})
}

// ClearFaults removes every fault.
func (s *Simulator) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

func (s *Simulator) takeFault(path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if !strings.HasPrefix(path, f.PathPrefix) || f.Times > 0 && f.used >= f.Times {
			continue
		}
		f.used++
		c := f.Fault
		return &c
	}
	return nil
}

// applyFault serves a fault; it reports whether the request is done.
func (s *Simulator) applyFault(f *Fault, w http.ResponseWriter, r *http.Request) bool {
	if f.Delay > 0 && !s.sleep(r, f.Delay) {
		return true
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
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
	if f.Status == 0 && f.Body == "" && f.BodySize == 0 {
		return false
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
	}
	body := f.Body
	if f.BodySize > 0 {
		body = strings.Repeat("x", f.BodySize)
	}
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
	return true
}
