package mcpengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/platform/connector"
)

// serveToolCall answers a tools/call request without mcp-go's HTTP
// transport, when that transport would add nothing: a single request over
// a protocol version before 2026-07-28 (no _meta, so no progress token, no
// trace context and no modern-era fields), or a 2026-07-28 call whose
// _meta and headers pass mcp-go's checks (modern.go). There is no per-request
// session, notification forwarder or goroutine (erpgate's tools send no
// notifications), and the reply is built by appendResponse, which splices
// the result's JSON in once instead of re-encoding it twice.
//
// A call of a known tool with nothing but a name and arguments is
// dispatched here too (directCall), as mcp-go's MCPServer would dispatch
// it: the request is parsed once instead of four times. Anything else (an
// unknown tool, a task, multi-round-trip fields, an unusual id) goes
// through MCPServer.HandleMessage, which maps every error as mcp-go does.
//
// It reports false, having written nothing, when the request is not such a
// call; mcp-go's transport then serves it.
//
// This is the direct path's one entry, kept because it pays: without it,
// BenchmarkServiceToolCall's CPU per call is 1.27 times as much before
// 2026-07-28 and 1.48 times on 2026-07-28 (bench/results/2026-12-02-hotpath.md).
// FuzzDirectPathRepliesAsMCPGo holds it to mcp-go's replies.
func (e *Engine) serveToolCall(ks *kindServer, w http.ResponseWriter, r *http.Request, body []byte, msg message) bool {
	if r.Method != http.MethodPost || msg.Method != string(mcp.MethodToolsCall) {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	if version == "" || !mcp.IsValidProtocolVersion(version) {
		return false
	}
	modern := mcp.IsModernProtocol(version)
	var params callParams
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &params) != nil {
		params = callParams{} // not ours to judge: mcp-go answers it
	}
	if len(params.Meta) > 0 && !modern {
		return false
	}
	ct, known := ks.tools[params.Name]
	plain := known && params.bare() && msg.JSONRPC == mcp.JSONRPC_VERSION && plainID(msg.ID)
	var reply func(dst []byte) []byte
	switch {
	case modern:
		// See modern.go: only a plain call that passes every check.
		if !plain || !modernDirect(r, version, ct, params.Name, msg.headerMethod, params.Meta, &ks.metas) {
			return false
		}
		if ct.tool.Effect != connector.Read {
			// A write asks for approval by what the client declared
			// (writes.go).
			if st := stateFrom(r.Context()); st != nil {
				st.meta = params.Meta
			}
		}
		reply = e.directCall(r.Context(), ct, msg.ID, params.Arguments, &ks.modern)
	case plain:
		reply = e.directCall(r.Context(), ct, msg.ID, params.Arguments, nil)
	default:
		resp := ks.mcp.HandleMessage(r.Context(), body)
		if resp == nil {
			// Not reached (a request with an id always gets a reply);
			// answered as mcp-go's transport would, and never handed on
			// to it, which would run the call twice.
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		st := stateFrom(r.Context())
		reply = func(dst []byte) []byte { return st.plainReply(appendResponse(dst, resp)) }
	}
	_, span := startSpan(r.Context(), "reply")
	defer endSpan(span, nil)
	// The buffer is taken once the call is over, so that calls waiting on
	// the ERP hold none.
	buf := replyBuffers.Get().(*[]byte)
	out := reply((*buf)[:0])
	st := stateFrom(r.Context())
	if st != nil && st.idSent != nil {
		out = st.restoreID(out)
	}
	// The length is announced, so the reply goes out in the fewest
	// writes and the client need not parse chunks.
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	if st != nil {
		var timing [48]byte
		h.Set("Server-Timing", string(st.appendServerTiming(timing[:0], time.Now())))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = writeReply(w, st, out)
	if cap(out) <= maxPooledReply {
		*buf = out[:0]
		replyBuffers.Put(buf)
	}
	return true
}

// callParams are the params of a tools/call request, as mcp-go's
// CallToolParams reads them.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           json.RawMessage `json:"_meta"`
	Task           json.RawMessage `json:"task"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
}

// plain reports whether the call has nothing but a name and arguments.
func (p callParams) plain() bool { return len(p.Meta) == 0 && p.bare() }

// bare reports whether the call has nothing but a name, arguments and
// _meta.
func (p callParams) bare() bool {
	return len(p.Task) == 0 && len(p.InputResponses) == 0 && len(p.RequestState) == 0
}

// plainID reports whether a request id is one that mcp-go would encode
// back exactly as written: a string without escapes, or an integer of at
// most 15 digits other than -0.
func plainID(id json.RawMessage) bool {
	if len(id) >= 2 && id[0] == '"' {
		for _, c := range id[1 : len(id)-1] {
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return id[len(id)-1] == '"'
	}
	digits := id
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && (len(digits) > 1 || len(digits) < len(id))) {
		// -0 too: mcp-go writes it back as it came, its request id type as 0.
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// directCall runs a plain call of a known tool and returns what appends
// its JSON-RPC reply: what MCPServer.handleToolCall does for such a call,
// with the same panic recovery (WithRecovery's error, reported to the
// OnError hook).
//
// With modern set, the reply is that of a 2026-07-28 call (modern.go).
func (e *Engine) directCall(ctx context.Context, ct *compiledTool, id, args json.RawMessage, modern *modernResult) func(dst []byte) []byte {
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ct.tool.Name}}
	if len(args) > 0 {
		req.Params.RawArguments = args
	}
	res, err := e.recoverTool(ctx, ct, req)
	if err == nil && res == nil {
		err = fmt.Errorf("tool '%s' handler returned no result", ct.tool.Name)
	}
	if err == nil && plainResult(res) {
		if modern != nil {
			return func(dst []byte) []byte { return modern.appendPlain(dst, id, res) }
		}
		return func(dst []byte) []byte { return appendPlainResult(dst, id, res) }
	}
	if err == nil && modern != nil {
		modern.decorate(res)
	}
	rid := mcp.NewRequestId(nil)
	if uerr := json.Unmarshal(id, &rid); uerr != nil {
		rid = mcp.NewRequestId(nil)
	}
	var resp any = mcp.NewJSONRPCResultResponse(rid, res)
	var required mcp.URLElicitationRequiredError
	switch {
	case err != nil && errors.As(err, &required):
		// A write's approval asked of a client before 2026-07-28 that
		// takes URL elicitations (writes.go): -32042, as mcp-go answers
		// it on its own path.
		d := required.JSONRPCError().Error
		resp = mcp.NewJSONRPCError(rid, d.Code, d.Message, d.Data)
	case err != nil:
		e.onProtocolError(ctx, rid, mcp.MethodToolsCall, &req, err)
		resp = mcp.NewJSONRPCError(rid, mcp.INTERNAL_ERROR, err.Error(), nil)
	}
	if err != nil {
		// In erpgate's words, as on mcp-go's path (protoerr.go).
		st := stateFrom(ctx)
		return func(dst []byte) []byte { return st.plainReply(appendResponse(dst, resp)) }
	}
	return func(dst []byte) []byte { return appendResponse(dst, resp) }
}

// recoverTool calls the tool's handler as mcp-go's WithRecovery does.
func (e *Engine) recoverTool(ctx context.Context, ct *compiledTool, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("panic recovered in %s tool handler: %v", req.Params.Name, r)
		}
	}()
	return ct.handler(ctx, req)
}

// replyBuffers hold the replies serveToolCall writes, so that a reply
// costs no allocation once the pool is warm. Buffers larger than
// maxPooledReply (rare, large results) are left to the collector.
var replyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledReply = 256 << 10

// appendResponse appends the JSON of a JSON-RPC reply and a newline, as
// mcp-go's transport writes it. A successful tool result of erpgate's usual
// shape (one text block holding the same JSON as structuredContent) is
// written directly: the structured JSON was encoded (and is compact and
// valid) when the call finished, so it is copied once and quoted once.
// Anything else is encoded by encoding/json.
func appendResponse(dst []byte, resp any) []byte {
	if r, ok := resp.(mcp.JSONRPCResponse); ok {
		if res, ok := r.Result.(*mcp.CallToolResult); ok && plainResult(res) {
			if id, err := json.Marshal(r.ID); err == nil {
				return appendPlainResult(dst, id, res)
			}
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "the reply could not be encoded", nil))
	}
	dst = append(dst, b...)
	return append(dst, '\n')
}

// appendPlainResult appends the reply carrying res, a plainResult, to the
// request whose id is the JSON id.
func appendPlainResult(dst, id []byte, res *mcp.CallToolResult) []byte {
	text := res.Content[0].(mcp.TextContent).Text
	// Room for the reply with one escape in eight bytes of text (a JSON
	// document's quotes); more grows the buffer once.
	dst = slices.Grow(dst, 96+len(id)+len(text)+len(text)/8+len(res.RawStructuredContent))
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"content":[{"type":"text","text":`...)
	dst = appendJSONString(dst, text)
	dst = append(dst, `}],"structuredContent":`...)
	dst = append(dst, res.RawStructuredContent...)
	return append(dst, "}}\n"...)
}

// plainResult reports whether a result has only what toolHandler puts in a
// success: one plain text block and the structured JSON.
func plainResult(r *mcp.CallToolResult) bool {
	if r.IsError || r.Meta != nil || r.ResultType != "" || len(r.InputRequests) > 0 || r.RequestState != "" ||
		r.StructuredContent != nil || len(r.RawStructuredContent) == 0 || len(r.Content) != 1 {
		return false
	}
	t, ok := r.Content[0].(mcp.TextContent)
	return ok && t.Type == "text" && t.Meta == nil && t.Annotations == nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Like encoding/json it
// escapes control characters, U+2028 and U+2029, and replaces invalid
// UTF-8 with U+FFFD; unlike it, it leaves <, > and & as they are (the reply
// is never embedded in HTML).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
