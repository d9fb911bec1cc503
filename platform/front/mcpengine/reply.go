package mcpengine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/store/usage"
)

// replyWriter is the response writer mcp-go's transport writes to. It
// notes what the engine needs to know about the reply: its status and the
// start of an error reply (a refusal the transport writes itself, before
// any hook runs, such as a 2026-07-28 header check), and when a
// subscriptions/listen acknowledgement has been written.
type replyWriter struct {
	http.ResponseWriter
	status int
	// st is the request's state: its error replies are put in erpgate's
	// words (protoerr.go).
	st *requestState
	// text is set when the transport refuses in plain text: the client
	// gets a JSON-RPC error instead, written once, chosen by the request's
	// method and header.
	text, textWritten bool
	method            string
	header            http.Header
	// id is the request's, when it has one that can be read: a refusal
	// in plain text is answered with it.
	id json.RawMessage
	// ctx is the request's; span is its "reply" span, from the first
	// write on, when the request is traced.
	ctx  context.Context
	span trace.Span
	// refusal holds the first bytes of a reply with status 400 or more.
	refusal []byte

	// listen is set for a subscriptions/listen request: only its writes
	// are looked through for the acknowledgement.
	listen bool
	mu     sync.Mutex
	acked  chan struct{} // closed once the acknowledgement has been written
}

// maxRefusalBytes bounds what replyWriter keeps of an error reply: enough
// for a JSON-RPC error's code.
const maxRefusalBytes = 1024

var ackMethod = []byte(mcp.MethodNotificationSubscriptionsAcknowledged)

func newReplyWriter(w http.ResponseWriter, method string) *replyWriter {
	rw := &replyWriter{ResponseWriter: w, listen: method == string(mcp.MethodSubscriptionsListen)}
	if rw.listen {
		rw.acked = make(chan struct{})
	}
	return rw
}

func (w *replyWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		_, w.span = startSpan(w.ctx, "reply")
		h := w.Header()
		if status >= http.StatusBadRequest && strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
			w.text = true
			h.Set("Content-Type", "application/json")
		}
		unbuffered(h)
	}
	w.ResponseWriter.WriteHeader(status)
}

// unbuffered tells a proxy in front of erpgate (nginx) not to hold back an
// event stream: its events are meant to reach the client as they are
// written (MCP Streamable HTTP recommends it).
func unbuffered(h http.Header) {
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		h.Set("X-Accel-Buffering", "no")
	}
}

func (w *replyWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
		_, w.span = startSpan(w.ctx, "reply")
		unbuffered(w.Header())
	}
	out := p
	switch ct := w.Header().Get("Content-Type"); {
	case w.text && w.textWritten:
		return len(p), nil
	case w.text:
		w.textWritten = true
		e := textRefusal(w.status, w.method, w.header)
		var id any
		if w.id != nil {
			id = w.id
		}
		out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": e.code, "message": e.message}})
		out = append(out, '\n')
	case strings.HasPrefix(ct, "application/json"):
		out = w.st.plainReply(p)
	}
	if w.st != nil && w.st.idSent != nil {
		out = w.st.restoreID(out)
	}
	if w.status >= http.StatusBadRequest && len(w.refusal) < maxRefusalBytes {
		w.refusal = append(w.refusal, out[:min(len(out), maxRefusalBytes-len(w.refusal))]...)
	}
	var n int
	var err error
	switch ct := w.Header().Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		// The whole reply, in one write: the request's work is done.
		n, err = writeReply(w.ResponseWriter, w.st, out)
	case strings.HasPrefix(ct, "text/event-stream"):
		w.eventDeadline()
		n, err = w.ResponseWriter.Write(out)
	default:
		n, err = w.ResponseWriter.Write(out)
	}
	if err == nil {
		n = len(p)
	}
	if w.listen && err == nil && bytes.Contains(p, ackMethod) {
		w.mu.Lock()
		select {
		case <-w.acked:
		default:
			close(w.acked)
		}
		w.mu.Unlock()
	}
	return n, err
}

// Flush keeps the reply streamable: mcp-go sends SSE only to a writer that
// flushes.
func (w *replyWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			w.eventDeadline()
		}
		f.Flush()
	}
}

// eventDeadline gives the client of an event stream the reply timeout
// (st.replyTimeout) to take in what is written next: each event, as a
// JSON reply whole (writeReply). Past it the write fails and the
// connection is closed, which ends the request and gives its slots back;
// a client that reads keeps its stream however long it lasts, each event
// having a deadline of its own. The server lifts the deadline before the
// next request on the connection.
func (w *replyWriter) eventDeadline() {
	if w.st != nil && w.st.replyTimeout > 0 {
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.st.replyTimeout))
	}
}

// Unwrap lets http.ResponseController reach the connection (mcp-go sets
// write deadlines through it).
func (w *replyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refusalCode is the usage error code of a reply the transport refused
// with, "" when the reply is not a refusal.
func (w *replyWriter) refusalCode() string {
	if w.status < http.StatusBadRequest {
		return ""
	}
	var reply struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(w.refusal), &reply) != nil || reply.Error == nil {
		return "PROTOCOL_ERROR"
	}
	if code, ok := rpcErrorCodes[reply.Error.Code]; ok {
		return code
	}
	return "PROTOCOL_ERROR"
}

// rpcErrorCodes names the JSON-RPC error codes of protocol refusals.
var rpcErrorCodes = map[int]string{
	mcp.PARSE_ERROR:                        "PARSE_ERROR",
	mcp.INVALID_REQUEST:                    "INVALID_REQUEST",
	mcp.METHOD_NOT_FOUND:                   "METHOD_NOT_FOUND",
	mcp.INVALID_PARAMS:                     "INVALID_PARAMS",
	mcp.INTERNAL_ERROR:                     "INTERNAL",
	mcp.HEADER_MISMATCH:                    "HEADER_MISMATCH",
	mcp.MISSING_REQUIRED_CLIENT_CAPABILITY: "MISSING_REQUIRED_CLIENT_CAPABILITY",
	mcp.UNSUPPORTED_PROTOCOL_VERSION:       "UNSUPPORTED_PROTOCOL_VERSION",
}

// noteRefusal records a refusal written by the transport on the request's
// usage event, unless something more precise was recorded already, and
// reports whether the reply was one.
func (st *requestState) noteRefusal(w *replyWriter) bool {
	code := w.refusalCode()
	if code == "" {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.outcome == "" || st.outcome == usage.Success {
		st.outcome, st.errorCode = usage.Error, code
	}
	return true
}

// noteRefusedTool names, on the usage event of a tools/call the transport
// refused before dispatch, the tool it was for, if the site's kind has a
// tool of that name (any other name stays "unknown").
func (st *requestState) noteRefusedTool(ks *kindServer, params json.RawMessage) {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	ct, ok := ks.tools[p.Name]
	if !ok {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.tool == "" {
		st.tool = ct.tool.Name
	}
}

// ackWait bounds how long a subscriptions/listen result waits for its
// acknowledgement to be written.
const ackWait = 10 * time.Second

// awaitAcknowledgement runs after mcp-go's subscriptions/listen handler
// returned, before its result is written. The handler has queued
// notifications/subscriptions/acknowledged for the transport's
// notification goroutine; mcp-go v1.2.1 then lets the result take the
// stream's lock, and a goroutine that has taken the acknowledgement off its
// channel but not yet the lock finds the request done and drops it (in
// about one try in ten). Waiting here until the acknowledgement has been
// written puts it before the result every time.
//
// The listen's work is done once its handler has returned: what is left
// is writing its stream, for which it gives its work slot back, as a JSON
// reply does (writeReply), so that a client that does not take its
// stream in holds only its call slot meanwhile, until the reply timeout.
func (e *Engine) awaitAcknowledgement(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
	st := stateFrom(ctx)
	if st == nil || st.reply == nil || !st.reply.listen {
		return
	}
	if st.slot != nil {
		st.slot.rest()
	}
	timer := time.NewTimer(ackWait)
	defer timer.Stop()
	select {
	case <-st.reply.acked:
	case <-ctx.Done():
	case <-timer.C:
		e.log.Warn("subscriptions/listen acknowledgement not written in time", zap.String("request_id", st.id), zap.Duration("waited", ackWait))
	}
}
