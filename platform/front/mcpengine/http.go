package mcpengine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/requestid"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// HeaderErrorFormat opts a service client into errors delivered as results.
const HeaderErrorFormat = "X-MCP-Error-Format"

// ServeMCP serves one authenticated MCP HTTP request for s.Site. The front
// door has already authenticated the caller; ServeMCP never does.
func (e *Engine) ServeMCP(w http.ResponseWriter, r *http.Request, s Session) {
	ks, ok := e.kinds[s.Site.Kind]
	if !ok {
		WriteJSONRPCError(w, http.StatusInternalServerError, nil, mcp.INTERNAL_ERROR, "this site's ERP kind is not served by this deployment")
		return
	}
	if e.RefuseOrigin(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodPost {
		if e.allowRequest(w, s, nil) {
			refuseStream(w, r)
		}
		return
	}
	r, root := e.startRoot(r, s)
	var st *requestState
	defer func() { finishRoot(root, st) }()
	arrived := time.Now()
	// One clock for the whole request: its waits at the door and for a
	// work slot, and its call (the call limits, the ERP's answers and
	// retries), all end by its arrival plus the budget, so that the
	// client gets its answer, or a safe error, within the time it was
	// told to wait, and no ERP work is done that nobody waits for.
	deadline := arrived.Add(e.opts.Budget)
	_, admission := startSpan(r.Context(), "admission")
	// A 2026-07-28 request names its method in Mcp-Method before its
	// body (mcp-go refuses one whose body names another): a request other
	// than a tool call is charged to its caller's budget here, and a tool
	// call checked against its caller's budget of refused tool calls
	// (admitToolCall), so that a caller over either takes no slot and has
	// nothing read. An earlier protocol's request is charged or checked
	// once its body has been read.
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	var headerMethod string
	charged, checked := false, false
	if mcp.IsModernProtocol(version) {
		switch headerMethod = r.Header.Get(mcp.HeaderMethod); headerMethod {
		case "":
		case string(mcp.MethodToolsCall):
			if ok, wait, first := e.refusedCalls.Check(callerKey(s)); !ok {
				// Refused, the body stays unread: the connection is
				// closed rather than the rest read (as admit does).
				w.Header().Set("Connection", "close")
				e.refuseRefusedCalls(w, s, nil, wait, first)
				endSpan(admission, errBusy)
				return
			}
			checked = true
		default:
			w.Header().Set("Connection", "close")
			if !e.allowRequest(w, s, nil) {
				endSpan(admission, errBusy)
				return
			}
			w.Header().Del("Connection")
			charged = true
		}
	}
	slot, ok := e.admit(w, r, s, deadline)
	if !ok {
		endSpan(admission, errBusy)
		return
	}
	defer slot.done()
	reqID := newRequestID()
	w.Header().Set("X-Request-Id", reqID)

	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = e.readBody(w, r); !ok {
			endSpan(admission, errBody)
			return
		}
	}
	// A work slot, by the request's deadline (see admit); a request
	// refused here has been read, and gets its id back with the error.
	if err := slot.work(r.Context(), deadline); err != nil {
		e.busy(w, r, err, readID(body))
		endSpan(admission, errBusy)
		return
	}
	endSpan(admission, nil)

	started := time.Now()
	e.opts.Metrics.AdmissionWait(started.Sub(arrived))
	st = &requestState{session: s, id: reqID, slot: slot, replyTimeout: e.opts.BodyTimeout, started: started, deadline: deadline, header: r.Header}
	msg, isRequest := peekRequest(body)
	if isRequest {
		st.method = msg.Method
		msg.headerMethod = headerMethod
	}
	toolCall := isRequest && msg.Method == string(mcp.MethodToolsCall)
	var id any
	if isRequest && msg.validID() {
		id = msg.ID
	}
	if isRequest && msg.validID() && msg.largeID() && !msg.answers() {
		// mcp-go reads a numeric id as a float64: one past ±maxID would
		// come back changed. It gets a string in its place, and every
		// reply has the id as sent put back (requestState.restoreID).
		body, msg.ID = st.standInID(body, msg.ID)
	}
	// Tool calls have the Limiter's limits, and those refused before
	// them or by them a budget of their own; every other request
	// (notifications and unparsable bodies too) the caller's budget.
	if toolCall && !checked && !e.admitToolCall(w, s, id) || !toolCall && !charged && !e.allowRequest(w, s, id) {
		return
	}
	ctx := withState(r.Context(), st)
	switch {
	case mcp.IsValidProtocolVersion(version) && !speaks(version) && !(isRequest && modernRequest(r.Header, msg.Params)):
		// A version mcp-go speaks and erpgate does not (engine.go): MCP
		// has a server refuse a version it does not support with 400.
		// A request whose _meta names 2026-07-28 goes on to mcp-go,
		// which refuses the header that is not the _meta's with 400 and
		// HeaderMismatch, as 2026-07-28 has it.
		if isRequest {
			st.setOutcome(usage.Error, "INVALID_REQUEST")
		}
		WriteJSONRPCError(w, http.StatusBadRequest, id, mcp.INVALID_REQUEST,
			"this server does not support the protocol version in the Mcp-Protocol-Version header; it supports "+strings.Join(protocolVersions, ", "))
	case batch(body):
		// mcp-go reads an array as JSON it cannot parse (-32700); it is
		// valid JSON, only not a message this server takes.
		WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST, "batches are not supported: send one JSON-RPC message per request")
	case !isRequest && noMessage(body):
		// mcp-go answers a JSON scalar or a method that is not a string
		// with -32700, as if it did not parse, and an empty or null
		// method with 202 and nothing, leaving the client waiting. An id
		// that could be read goes back with the error.
		WriteJSONRPCError(w, http.StatusBadRequest, readID(body), mcp.INVALID_REQUEST,
			"this is not a JSON-RPC message: send one JSON object with \"jsonrpc\": \"2.0\", an id and a method (a name)")
	case len(msg.ID) > maxIDBytes:
		// Every reply carries the id back (a subscriptions/listen stream
		// three times): an id of up to the request's bound would have
		// erpgate hold and send back a megabyte for each request. A
		// response's (a client's answer) is refused too: no request of
		// erpgate's has such an id, and mcp-go would send it back.
		if isRequest {
			st.setOutcome(usage.Error, "INVALID_REQUEST")
		}
		WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST, overlongID)
		if msg.Method == string(mcp.MethodToolsCall) {
			st.noteRefusedTool(ks, msg.Params)
		}
	case isRequest && msg.answers():
		// A request that also carries a result or an error is not a
		// JSON-RPC message: mcp-go's server would take it for a response
		// and answer nothing (202), leaving the client waiting, while the
		// direct path would run the call.
		st.setOutcome(usage.Error, "INVALID_REQUEST")
		WriteJSONRPCError(w, http.StatusBadRequest, msg.replyID(), mcp.INVALID_REQUEST, "a request must not carry a result or an error")
		if msg.Method == string(mcp.MethodToolsCall) {
			st.noteRefusedTool(ks, msg.Params)
		}
	case isRequest && !msg.validID():
		// MCP ids are strings or integers, never null. mcp-go would run
		// the call and echo an object, array or boolean, take a null id
		// for a notification (202, and the client waits for a reply that
		// never comes), and run a call whose id is no integer (1.5).
		st.setOutcome(usage.Error, "INVALID_REQUEST")
		WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST,
			"a request's id must be a string or an integer (not null, and not a number with a fraction, such as 1.5)")
		if msg.Method == string(mcp.MethodToolsCall) {
			st.noteRefusedTool(ks, msg.Params)
		}
	case !isRequest || msg.Method != string(mcp.MethodToolsCall) || !e.serveToolCall(ks, w, r.WithContext(ctx), body, msg):
		if isRequest && refuseListen(w, r, st, msg.Method, id) {
			break
		}
		rw := newReplyWriter(w, st.method)
		rw.ctx, rw.st, rw.method, rw.header = ctx, st, r.Method, r.Header
		if isRequest && msg.validID() {
			rw.id = msg.ID
		}
		st.reply = rw
		r2 := r.Clone(ctx)
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		ks.http.ServeHTTP(rw, r2)
		endSpan(rw.span, nil)
		if st.noteRefusal(rw) && isRequest && msg.Method == string(mcp.MethodToolsCall) {
			st.noteRefusedTool(ks, msg.Params)
		}
	}
	if toolCall && st.limits.Load() != limitsReached {
		// Refused before the limits (an unknown tool, invalid
		// arguments), or by them (RATE_LIMITED): counted here.
		e.chargeRefusedCall(s)
	}

	if !isRequest {
		// Notifications, responses and malformed messages are not requests
		// the server answers with a result: they make no usage event.
		return
	}
	e.emitUsage(r, st, started)
}

// refuseListen answers a 2026-07-28 subscriptions/listen request whose
// Accept header rules out text/event-stream with 406 and reports true.
// Its only answer is an event stream that stays open ("The server's
// response is itself an SSE stream", 2026-07-28, Streamable HTTP), which
// such a client has said it cannot read; RFC 9110 (12.5.1) lets a server
// answer 406 then. Other requests are served whatever their Accept header
// says.
//
// id is the request's id as sent (nil if none MCP allows).
func refuseListen(w http.ResponseWriter, r *http.Request, st *requestState, method string, id any) bool {
	if method != string(mcp.MethodSubscriptionsListen) || !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) ||
		acceptsEventStream(r.Header.Values("Accept")) {
		return false
	}
	st.setOutcome(usage.Error, "INVALID_REQUEST")
	WriteJSONRPCError(w, http.StatusNotAcceptable, id, mcp.INVALID_REQUEST,
		"subscriptions/listen is answered with an event stream, which this request's Accept header rules out: send Accept: application/json, text/event-stream")
	return true
}

// acceptsEventStream reports whether Accept header values admit
// text/event-stream: the most specific media range that matches it
// (text/event-stream, then text/*, then */*) has a weight above 0
// (RFC 9110, 12.5.1). No header, or one with no media range that can be
// read, admits anything.
func acceptsEventStream(values []string) bool {
	const (
		noRange = iota
		anyType
		anyText
		eventStream
	)
	readable, best, weight := false, noRange, 0.0
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			readable = true
			rank := noRange
			switch mt {
			case "text/event-stream":
				rank = eventStream
			case "text/*":
				rank = anyText
			case "*/*":
				rank = anyType
			}
			if rank <= best {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f <= 1 {
					q = f
				}
			}
			best, weight = rank, q
		}
	}
	return !readable || best != noRange && weight > 0
}

// RefuseOrigin answers a request from a browser origin that is not one of
// Options.AllowedOrigins with 403 and reports true. Front doors call it
// before they look at the request's credentials, as ServeMCP does again:
// "If the Origin header is present and invalid, servers MUST respond with
// HTTP 403 Forbidden" (MCP Streamable HTTP), so a browser client of
// another origin is not sent through a sign-in only to be refused after
// it.
func (e *Engine) RefuseOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || e.origins[strings.ToLower(origin)] {
		return false
	}
	WriteJSONRPCError(w, http.StatusForbidden, nil, mcp.INVALID_REQUEST, "requests from this browser origin are not allowed")
	return true
}

func (e *Engine) emitUsage(r *http.Request, st *requestState, started time.Time) {
	tool, outcome, code, stage := st.snapshot()
	if r.Context().Err() != nil {
		// The client went away before the reply could be delivered.
		outcome, code = usage.Cancelled, ""
	}
	if outcome == "" {
		outcome = usage.Success
	}
	method := st.method
	if !knownMethod(method) {
		method = "unknown"
	}
	if method == string(mcp.MethodToolsCall) && tool == "" {
		tool = "unknown"
	}
	now := time.Now()
	if method == string(mcp.MethodToolsCall) {
		tm := st.metrics
		if tm == nil {
			// Refused before the tool's chain ran (mcp-go's own checks):
			// its series if the tool is known, else "unknown".
			if ct, ok := e.kinds[st.session.Site.Kind].tools[tool]; ok {
				tm = ct.metrics
			} else {
				tm = e.opts.Metrics.Tool(st.session.Site.Kind, "")
			}
		}
		tm.Call(st.session.Site.Slug, string(outcome), code, now.Sub(started))
	}
	redactedCount, redactedFields := st.redacted()
	e.opts.Usage.Record(usage.Event{
		Timestamp:  started.UTC(),
		SiteID:     st.session.Site.ID,
		SiteSlug:   st.session.Site.Slug,
		AuthType:   st.session.Principal.AuthType,
		ERPUser:    st.session.Principal.Subject,
		ClientID:   st.session.ClientID,
		RequestID:  st.id,
		Method:     method,
		Tool:       tool,
		Outcome:    outcome,
		ErrorCode:  code,
		DurationMS: now.Sub(started).Milliseconds(),
		ERPMS:      st.erpDuration(now).Milliseconds(),
		Approval:   stage,

		RedactedCount:  redactedCount,
		RedactedFields: redactedFields,
	})
}

// message is the part of a JSON-RPC message the engine reads before
// handing it on.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
	// headerMethod is the Mcp-Method header of a 2026-07-28 request, as
	// the door read it ("" when it did not).
	headerMethod string
}

// batch reports whether a body is a JSON array (a JSON-RPC batch).
func batch(body []byte) bool {
	trimmed := bytes.TrimSpace(body)
	return len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed)
}

// maxID is the largest whole number mcp-go echoes as it came: it reads
// numeric ids as float64, and a larger one would come back changed, so
// the client could not match the reply to its request. Such an id is
// handed to mcp-go as a string (standInID).
const maxID = 1<<53 - 1

// maxIDBytes bounds a message's id as sent (a string's quotes and
// escapes included). Clients number their requests with small integers or
// UUIDs (38 bytes as a JSON string); 256 bytes leaves room for an id with
// a prefix or two, while every reply, which carries the id back, stays
// small. A longer id is refused (validID) before anything runs.
const maxIDBytes = 256

// overlongID is the refusal of an id longer than maxIDBytes.
const overlongID = "a message's id must be at most 256 bytes long as sent: number requests with a short string (such as a UUID) or an integer"

// noMessage reports whether a body is valid JSON but no JSON-RPC message:
// neither an object nor an array, or an object with a method member that
// is not a name (a non-empty string).
func noMessage(body []byte) bool {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] == '[' || !json.Valid(trimmed) {
		return false // a batch, or not JSON (-32700)
	}
	if trimmed[0] != '{' {
		return true
	}
	var m struct {
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(trimmed, &m) != nil || len(m.Method) == 0 {
		return false
	}
	var name string
	return json.Unmarshal(m.Method, &name) != nil || name == ""
}

// validID reports whether the message's id, if any, is one the reply
// can carry back as sent: a string, or an integer (MCP: ids are strings or
// integers, never null) of any value. MCP's JSON Schema (2020-12) types the
// id "integer", which is any number whose fractional part is zero, so
// 1.0 and 1e3 are integers as much as 1 and 1000; 1.5 and 1e-3 are not.
// An id longer than maxIDBytes is not one erpgate carries back.
func (m message) validID() bool {
	return len(m.ID) == 0 || len(m.ID) <= maxIDBytes && (m.ID[0] == '"' || wholeNumber(m.ID) || integralNumber(m.ID))
}

// largeID reports whether the message's id is an integer mcp-go would not
// echo as sent: a whole number beyond ±maxID, or an integer written with
// a point or an exponent (mcp-go would write 1e3 back as 1000).
func (m message) largeID() bool {
	if !wholeNumber(m.ID) {
		return integralNumber(m.ID)
	}
	n, err := strconv.ParseInt(string(bytes.TrimPrefix(m.ID, []byte("-"))), 10, 64)
	return err != nil || n > maxID
}

// wholeNumber reports whether b is a JSON number without a fraction or an
// exponent.
func wholeNumber(b []byte) bool {
	digits := bytes.TrimPrefix(b, []byte("-"))
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// integralNumber reports whether b is a JSON number whose value is an
// integer (its fractional part zero), written with a point or an exponent
// or both: 1.0, 1e3, -2.50E+1, 10e-1. It reads the digits only, so an
// exponent of any size costs nothing.
func integralNumber(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("-"))
	n := digitsAt(b, 0)
	if n == 0 || n > 1 && b[0] == '0' {
		return false
	}
	mantissa, frac := b[:n], 0
	rest := b[n:]
	if len(rest) > 0 && rest[0] == '.' {
		frac = digitsAt(rest, 1)
		if frac == 0 {
			return false
		}
		mantissa = append(append([]byte(nil), mantissa...), rest[1:1+frac]...)
		rest = rest[1+frac:]
	}
	exp, expNegative, expHuge := 0, false, false
	if len(rest) > 0 && (rest[0] == 'e' || rest[0] == 'E') {
		rest = rest[1:]
		if len(rest) > 0 && (rest[0] == '+' || rest[0] == '-') {
			expNegative = rest[0] == '-'
			rest = rest[1:]
		}
		d := digitsAt(rest, 0)
		if d == 0 {
			return false
		}
		digits := bytes.TrimLeft(rest[:d], "0")
		rest = rest[d:]
		if expHuge = len(digits) > 9; !expHuge && len(digits) > 0 {
			exp, _ = strconv.Atoi(string(digits))
		}
	} else if frac == 0 {
		return false // a whole number: wholeNumber's
	}
	if len(rest) > 0 {
		return false
	}
	significant := bytes.TrimRight(mantissa, "0")
	if len(significant) == 0 {
		return true // zero
	}
	// The value is significant × 10^(exponent − frac + trailing zeros).
	zeros := len(mantissa) - len(significant)
	if expHuge {
		return !expNegative
	}
	if expNegative {
		exp = -exp
	}
	return exp-frac+zeros >= 0
}

// digitsAt is the number of ASCII digits in b from i on.
func digitsAt(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] >= '0' && b[i+n] <= '9' {
		n++
	}
	return n
}

// standInID returns body with its id replaced by a string of its own,
// which mcp-go echoes unchanged, and that string as JSON; st notes both,
// so that restoreID puts the id as sent back in the replies. When body
// cannot be rewritten it is returned as it is.
func (st *requestState) standInID(body []byte, sent json.RawMessage) ([]byte, json.RawMessage) {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return body, sent
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	standIn := json.RawMessage(`"erpgate-id-` + hex.EncodeToString(nonce[:]) + `"`)
	for k := range members {
		// encoding/json (mcp-go's decoder too) matches member names
		// without regard to case.
		if strings.EqualFold(k, "id") {
			delete(members, k)
		}
	}
	members["id"] = standIn
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(members) != nil {
		return body, sent
	}
	st.idSent, st.idStandIn = sent, standIn
	return buf.Bytes(), standIn
}

// replyID is the id an error reply to the message carries: its id as
// sent when that is one MCP allows (validID), else nil (null), as
// JSON-RPC has it for an id that could not be read.
func (m message) replyID() any {
	if len(m.ID) == 0 || !m.validID() {
		return nil
	}
	return m.ID
}

// readID is the replyID of body, one message as sent: nil when it is not
// a JSON object or has no id MCP allows.
func readID(body []byte) any {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return message{ID: m.ID}.replyID()
}

// answers reports whether the message carries a result or an error (not
// null), as only a response may.
func (m message) answers() bool {
	return (len(m.Result) > 0 && string(m.Result) != "null") || (len(m.Error) > 0 && string(m.Error) != "null")
}

// peekRequest parses a single request message (one with an id, null
// too: such a message is a request with an id MCP does not allow, not a
// notification). Batches, notifications and unparsable bodies are not
// requests. A JSON object that is not a request (a notification, a
// response) is returned as read all the same, and one with a member of
// another type than a message's (a "jsonrpc" that is no string) with its
// id alone: mcp-go's transport reads that id all the same, so its bound
// (maxIDBytes) holds for it too.
func peekRequest(body []byte) (msg message, ok bool) {
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || trimmed[0] != '{' {
		return message{}, false
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			// encoding/json reads the other members on: the id is as sent.
			return message{ID: msg.ID}, false
		}
		return message{}, false
	}
	return msg, msg.Method != "" && len(msg.ID) > 0
}

// modernRequest reports whether a request belongs to protocol 2026-07-28
// or later, by its header or its _meta, as mcp-go's transport decides:
// such a request never gets a session id.
func modernRequest(h http.Header, params json.RawMessage) bool {
	if mcp.IsModernProtocol(h.Get(mcp.HeaderProtocolVersion)) {
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	return json.Unmarshal(params, &p) == nil && json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v) == nil && mcp.IsModernProtocol(v)
}

// knownMethods are the MCP request methods of every protocol version,
// recorded by name; any other method is recorded as "unknown", so that a
// client cannot fill the table with names of its own.
var knownMethods = map[string]bool{
	string(mcp.MethodInitialize): true, string(mcp.MethodPing): true,
	string(mcp.MethodToolsList): true, string(mcp.MethodToolsCall): true,
	string(mcp.MethodResourcesList): true, string(mcp.MethodResourcesTemplatesList): true,
	string(mcp.MethodResourcesRead): true, string(mcp.MethodResourcesSubscribe): true,
	string(mcp.MethodResourcesUnsubscribe): true, string(mcp.MethodPromptsList): true,
	string(mcp.MethodPromptsGet): true, string(mcp.MethodSetLogLevel): true,
	string(mcp.MethodCompletionComplete): true, string(mcp.MethodServerDiscover): true,
	string(mcp.MethodSubscriptionsListen): true,
	string(mcp.MethodTasksGet):            true, string(mcp.MethodTasksList): true,
	string(mcp.MethodTasksResult): true, string(mcp.MethodTasksCancel): true,
	// Requests a server sends; a client that sends one is still recorded
	// by name.
	string(mcp.MethodSamplingCreateMessage): true, string(mcp.MethodElicitationCreate): true,
	string(mcp.MethodListRoots): true,
}

func knownMethod(m string) bool { return knownMethods[m] }

// onProtocolError records JSON-RPC errors (unknown tool, unknown method,
// invalid params) on the request's usage event.
func (e *Engine) onProtocolError(ctx context.Context, id any, method mcp.MCPMethod, message any, err error) {
	st := stateFrom(ctx)
	if st == nil {
		return
	}
	code := "PROTOCOL_ERROR"
	switch {
	case errors.Is(err, server.ErrToolNotFound):
		code = "UNKNOWN_TOOL"
	case errors.Is(err, server.ErrUnsupported):
		code = "METHOD_NOT_FOUND"
	}
	plain, explained := protocolError(string(method), message, err)
	if explained && code == "PROTOCOL_ERROR" {
		// The code the client gets (protoerr.go): INVALID_PARAMS for
		// params that are not as MCP defines them.
		code = rpcErrorCodes[plain.code]
	}
	st.mu.Lock()
	if st.outcome == "" {
		st.outcome, st.errorCode = usage.Error, code
	}
	if explained && st.plainError == nil {
		st.plainError = &plain
	}
	st.mu.Unlock()
}

// refuseStream answers every method but POST with 405 and Allow: POST.
//
// A GET opens the standing stream: in stateless mode erpgate never sends
// a message on it, so it does not hold one open (an open stream would
// hold a slot for as long as the client likes). The streamable HTTP
// transport lets a server answer 405; clients then use POST only.
//
// A DELETE asks to end the session. The capability session id of the
// protocols before 2026-07-28 is sealed and read by every replica without
// asking anyone (seal.go), so nothing could end it before it is no longer
// sent; answering 200 would tell the client it ended while the same id
// goes on working. MCP (Streamable HTTP, session management) has a server
// that does not allow clients to end sessions answer 405. A DELETE naming
// a protocol version erpgate does not speak gets 400, as it did from
// mcp-go's transport. 2026-07-28 removed the GET stream and DELETE with it.
//
// The connection is closed too: clients open the stream on a connection
// of its own, so nothing is lost, and a caller cannot keep thousands of
// them idle.
func refuseStream(w http.ResponseWriter, r *http.Request) {
	// A protocol version erpgate does not speak is refused with 400 first,
	// as MCP has a server answer any request naming one.
	if v := r.Header.Get(mcp.HeaderProtocolVersion); (r.Method == http.MethodDelete || r.Method == http.MethodGet) && v != "" && !speaks(v) {
		WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.INVALID_REQUEST,
			"this server does not support the protocol version in the Mcp-Protocol-Version header; it supports "+strings.Join(protocolVersions, ", "))
		return
	}
	w.Header().Set("Allow", "POST")
	w.Header().Set("Connection", "close")
	var msg string
	switch {
	case r.Method == http.MethodGet:
		msg = "this server sends nothing on a standing GET stream: send requests with POST"
	case r.Method == http.MethodDelete && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)):
		msg = "this server does not end sessions on a client's request: the session id stays valid, and a client that no longer needs the session simply stops sending it"
	default:
		// Any other method, and DELETE on 2026-07-28, which has no
		// sessions: not one of the endpoint's.
		msg = "send MCP requests with POST"
	}
	WriteJSONRPCError(w, http.StatusMethodNotAllowed, nil, mcp.INVALID_REQUEST, msg)
}

// callerKey is the key of the session's caller in the replica's bounds.
func callerKey(s Session) string {
	if s.LimitKey == "" {
		return "site:" + s.Site.ID.String()
	}
	return s.LimitKey
}

// allowRequest takes one request other than a tool call from the
// session's caller's budget (Options.CallerRequests), and then from its
// site's (siteRequests), or answers 429 with Retry-After and a JSON-RPC
// error (with id, when not nil) and returns false. A request the site's
// budget refuses has taken its caller's share all the same. It asks
// nothing of the database.
func (e *Engine) allowRequest(w http.ResponseWriter, s Session, id any) bool {
	key := callerKey(s)
	ok, wait, first := e.requests.Allow(key)
	if !ok {
		e.refuseCaller(w, s, id, wait, first, "requests other than tool calls")
		return false
	}
	if e.siteRequests == nil {
		return true
	}
	if ok, wait, first = e.siteRequests.Allow(s.Site.ID.String()); ok {
		return true
	}
	if first {
		e.log.Info("site request limit", zap.String("site", s.Site.Slug), zap.String("requests", "requests other than tool calls"))
	}
	e.opts.Metrics.AdmissionRefused("site_requests")
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	WriteJSONRPCError(w, http.StatusTooManyRequests, id, mcp.INVALID_REQUEST,
		fmt.Sprintf("this site's callers together sent more requests other than tool calls than one site's callers may; retry in %d %s", secs, seconds(secs)))
	return false
}

// seconds is the unit of a whole number of seconds.
func seconds(n int) string {
	if n == 1 {
		return "second"
	}
	return "seconds"
}

// admitToolCall lets a tool call in unless the session's caller has
// spent its budget of refused tool calls (Options.CallerRequests): those
// refused before the limits (unknown tools, invalid arguments), which
// never reach the Limiter, and those the Limiter refused (RATE_LIMITED);
// ServeMCP charges them. A caller that keeps calling past its limits
// thus gets its first refusals as tool results, then 429 here, with no
// usage event. It asks nothing of the database.
func (e *Engine) admitToolCall(w http.ResponseWriter, s Session, id any) bool {
	ok, wait, first := e.refusedCalls.Check(callerKey(s))
	if ok {
		return true
	}
	e.refuseRefusedCalls(w, s, id, wait, first)
	return false
}

// refuseRefusedCalls answers 429 to a tool call of a caller whose budget
// of refused tool calls Check found spent (wait, first): one held because
// its site's callers together spent theirs (chargeRefusedCall) is told so,
// as a request over the site's budget of other requests is; otherwise the
// caller spent its own.
func (e *Engine) refuseRefusedCalls(w http.ResponseWriter, s Session, id any, wait time.Duration, first bool) {
	if e.siteRefusedCalls == nil {
		e.refuseCaller(w, s, id, wait, first, refusedToolCalls)
		return
	}
	if ok, _, _ := e.siteRefusedCalls.Check(s.Site.ID.String()); ok {
		e.refuseCaller(w, s, id, wait, first, refusedToolCalls)
		return
	}
	if first {
		e.log.Info("site request limit", zap.String("site", s.Site.Slug), zap.String("requests", refusedToolCalls))
	}
	e.opts.Metrics.AdmissionRefused("site_requests")
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	WriteJSONRPCError(w, http.StatusTooManyRequests, id, mcp.INVALID_REQUEST,
		fmt.Sprintf("this site's callers together had more tool calls refused (unknown tools, invalid arguments, calls over their limits) than one site's callers may; retry in %d %s", secs, seconds(secs)))
}

// chargeRefusedCall charges a refused tool call to its caller's budget
// of refused tool calls, and to its site's (siteRefusedCalls). Once the
// site's is spent, the caller is held (its own budget put in debt) until
// the site's has room again: each answered refusal puts the site's budget
// further in debt, but never deeper than the time it takes to fill
// (sourcelimit.ChargeWait), so however many callers a site has, past its
// budget each is answered at most once in that time (10 s by default),
// and a caller refused once while others spent it is held no longer.
// Only refused calls pay this, never a call that is let in
// (admitToolCall checks the caller's budget alone); a held caller's 429
// says its site's callers spent the budget (refuseRefusedCalls).
func (e *Engine) chargeRefusedCall(s Session) {
	key := callerKey(s)
	e.refusedCalls.Charge(key)
	if e.siteRefusedCalls == nil {
		return
	}
	if wait := e.siteRefusedCalls.ChargeWait(s.Site.ID.String()); wait > 0 {
		e.refusedCalls.Hold(key, wait)
	}
}

// refusedToolCalls names the budget of refused tool calls in a refusal.
const refusedToolCalls = "tool calls that were refused (unknown tools, invalid arguments, calls over its limits)"

// refuseCaller answers 429 with Retry-After and a JSON-RPC error saying
// the caller sent more of what than one caller may.
func (e *Engine) refuseCaller(w http.ResponseWriter, s Session, id any, wait time.Duration, first bool, what string) {
	if first {
		e.log.Info("caller request limit", zap.String("caller", callerKey(s)), zap.String("site", s.Site.Slug), zap.String("requests", what))
	}
	e.opts.Metrics.AdmissionRefused("caller_requests")
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	WriteJSONRPCError(w, http.StatusTooManyRequests, id, mcp.INVALID_REQUEST,
		fmt.Sprintf("this caller sent more %s than one caller may; retry in %d %s", what, secs, seconds(secs)))
}

// admit takes, for the session's caller, a call slot (see admission.go)
// before the request body is read, so a waiting request holds only its
// connection. A caller over its share of the replica's call slots, or
// whose site is over its share, is refused after a short wait, and a
// request still waiting at its deadline (its arrival plus the upstream
// budget), with 503: the replica is overloaded, and another one, or a
// later retry, may serve it.
func (e *Engine) admit(w http.ResponseWriter, r *http.Request, s Session, deadline time.Time) (*callSlot, bool) {
	slot, err := e.admission.enterAs(r.Context(), s.Site.ID.String(), callerKey(s), deadline)
	if err != nil {
		// The body has not been read: close the connection rather than
		// let the server read the rest of it (as slowly as the client
		// likes) before it sends the answer.
		w.Header().Set("Connection", "close")
		e.busy(w, r, err, nil)
		return nil, false
	}
	return slot, true
}

// busy answers a request refused for want of a slot with 503; id is its
// id, nil when it is not known.
func (e *Engine) busy(w http.ResponseWriter, r *http.Request, err error, id any) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	w.Header().Set("Retry-After", "1")
	msg := "erpgate is busy; retry shortly"
	reason := "busy"
	if errors.Is(err, errCallerShare) {
		msg = "this caller has as many requests in progress as one caller may have on this server; retry when one has ended"
		reason = "caller_share"
	}
	if errors.Is(err, errSiteShare) {
		msg = "this site's callers have as many requests in progress as one site may have on this server; retry when one has ended"
		reason = "site_share"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("erpgate is busy: this request waited for a free slot until its time ran out (%s from its arrival), and nothing of it was done; retry shortly", e.opts.Budget)
	}
	e.opts.Metrics.AdmissionRefused(reason)
	WriteJSONRPCError(w, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR, msg)
}

// readBody reads the request body, at most MaxRequestBytes of it and
// within BodyTimeout: the read deadline is on the connection, so a body
// that arrives too slowly is cut off (408) and its connection closed. The
// request holds a call slot meanwhile, never a work slot.
func (e *Engine) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(e.opts.BodyTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, e.opts.MaxRequestBytes))
	if err == nil {
		if deadline {
			// The handler may run for the whole budget: no deadline on
			// reading (the server watches the connection for the client
			// going away).
			_ = rc.SetReadDeadline(time.Time{})
		}
		return body, true
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		WriteJSONRPCError(w, http.StatusRequestEntityTooLarge, nil, mcp.INVALID_REQUEST, "the request body is larger than this server accepts")
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The deadline stays: the connection cannot be reused, and the
		// server closes it instead of reading the rest.
		w.Header().Set("Connection", "close")
		WriteJSONRPCError(w, http.StatusRequestTimeout, nil, mcp.INVALID_REQUEST,
			fmt.Sprintf("the request body arrived too slowly: send it within %s", e.opts.BodyTimeout))
	default:
		WriteJSONRPCError(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR, "the request body could not be read")
	}
	return nil, false
}

// writeReply writes a request's whole reply once its work is done. The
// request gives its work slot back first, so that a client that takes its
// reply in slowly, or not at all, holds no work slot meanwhile (only its
// call slot, which holds the reply's bytes), and the reply must be taken
// in within st.replyTimeout: past it the write fails and the connection
// is closed, giving the call slot back. The server sends what is left of
// the reply after the handler, within the same deadline, and lifts it
// before the next request on the connection.
func writeReply(w http.ResponseWriter, st *requestState, out []byte) (int, error) {
	if st != nil {
		if st.slot != nil {
			st.slot.rest()
		}
		if st.replyTimeout > 0 {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(st.replyTimeout))
		}
	}
	return w.Write(out)
}

// errBusy marks an admission span of a request refused at the door.
// errBody one whose body could not be read.
var (
	errBusy = toolerr.New(toolerr.UpstreamUnavailable, "refused at the door")
	errBody = toolerr.New(toolerr.InvalidArgument, "the body could not be read")
)

// WriteJSONRPCError writes a JSON-RPC error response with an HTTP status.
func WriteJSONRPCError(w http.ResponseWriter, status int, id any, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
}

// WriteLookupsRefused answers a request whose source has sent too many
// tokens that are not valid (sourcelimit.Lookups), at any door that takes
// tokens: 429 with Retry-After and a JSON-RPC error, and a log line once
// per run of refusals, as the other source limits. endpoint names the door
// in that line.
func WriteLookupsRefused(w http.ResponseWriter, log *zap.Logger, endpoint string, refused *sourcelimit.LookupsRefused) {
	if refused.First {
		log.Info("source rate limit", zap.String("endpoint", endpoint), zap.String("source", refused.Source))
	}
	WriteJSONRPCError(w, http.StatusTooManyRequests, nil, mcp.INVALID_REQUEST, refused.Answer(w.Header()))
}

func newRequestID() string { return requestid.New(time.Now()) }
