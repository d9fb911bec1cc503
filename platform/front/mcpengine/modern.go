package mcpengine

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// The direct path for protocol 2026-07-28 (and later) tools/call requests.
//
// A modern request names its version, client and capabilities in _meta
// and its method and tool in the Mcp-Method and Mcp-Name headers, and
// needs no initialize. mcp-go's transport checks all of that and then
// serves the call through an ephemeral session, a notification forwarder
// goroutine and channels, and re-encodes the result; its checks read the
// request headers from a context key only that transport can set. A plain
// call whose checks all pass (the same checks, with mcp-go's exported
// helpers; a _meta that passed is remembered by its bytes, and Mcp-Name is
// compared with the name already decoded) goes to directCall instead, and
// its reply gets what mcp-go's
// decoration adds to a modern result: resultType "complete" and the
// server's identity in _meta. Anything else, every refusal included, is
// left to mcp-go, which answers it with the error and status it always
// did. FuzzDirectPathRepliesAsMCPGo holds both paths to the same
// replies.

// modernMetaKeys are the _meta members a plain modern call may carry.
var modernMetaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// modernDirect reports whether a modern tools/call of ct, already known
// to be plain apart from its _meta, passes every check mcp-go's transport
// and server would make, with nothing in _meta beyond the version, the
// client's identity and its capabilities (a progress token, trace context
// or log level goes to mcp-go). name is the tool's name as the params
// decoded (mcp-go decodes the same params the same way for Mcp-Name).
// method is the Mcp-Method header as the door read it ("": read here).
// metas, if not nil, remembers the _meta members that passed.
func modernDirect(r *http.Request, version string, ct *compiledTool, name, method string, meta json.RawMessage, metas *metaVerdicts) bool {
	if ct.headerBound {
		return false
	}
	if r.Header.Get(mcp.HeaderLastEventID) != "" {
		return false
	}
	if !metas.ok(version, meta) {
		return false
	}
	if method == "" {
		method = r.Header.Get(mcp.HeaderMethod)
	}
	return standardHeadersMatch(method, r.Header.Get, version, name)
}

// modernMetaOK reports whether a plain modern call's _meta passes
// mcp-go's checks: the members are only the version, which must be
// version, the client's capabilities (an object) and, optionally, its
// identity (an object), each decoding as mcp-go decodes it.
func modernMetaOK(version string, meta json.RawMessage) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(meta, &members) != nil {
		return false
	}
	for k := range members {
		if !slices.Contains(modernMetaKeys, k) {
			return false
		}
	}
	var v string
	if json.Unmarshal(members[mcp.MetaKeyProtocolVersion], &v) != nil || v != version {
		return false
	}
	var caps mcp.ClientCapabilities
	if c := members[mcp.MetaKeyClientCapabilities]; len(c) == 0 || c[0] != '{' || json.Unmarshal(c, &caps) != nil {
		return false
	}
	if c, ok := members[mcp.MetaKeyClientInfo]; ok {
		var info mcp.Implementation
		if len(c) == 0 || c[0] != '{' || json.Unmarshal(c, &info) != nil {
			return false
		}
	}
	return true
}

// standardHeadersMatch is mcp.ValidateStandardHeaders for a tools/call
// whose params named the tool name: Mcp-Method (method, as read from
// get) is tools/call and Mcp-Name, decoded as mcp-go decodes it, is name.
// (mcp-go's own function decodes the params once more to find the name.)
func standardHeadersMatch(method string, get func(string) string, version, name string) bool {
	if !mcp.RequiresStandardHeaders(version) {
		return true
	}
	if method != string(mcp.MethodToolsCall) {
		return false
	}
	h := get(mcp.HeaderName)
	if h == "" {
		return false
	}
	decoded, ok := mcp.DecodeHeaderValue(h)
	return ok && decoded == name
}

// metaVerdicts remembers, by their bytes, the _meta members that passed
// modernMetaOK, with the version they name: a client sends the same _meta
// on every call, and decoding it each time (6 µs and 36 allocations) was a
// large part of what a modern call cost beyond a 2025-11-25 one. The
// verdict is a function of the bytes and the version alone, so a
// remembered one is never stale. The set is bounded in entries and in the
// size of each; when full it starts again, so a client sending ever new
// _meta can at most make the others pay the checks once more.
type metaVerdicts struct {
	mu sync.RWMutex
	m  map[string]string
}

const (
	metaVerdictsMax   = 1024
	metaVerdictMaxLen = 2048
)

// ok is modernMetaOK, remembered. A nil set remembers nothing.
func (c *metaVerdicts) ok(version string, meta json.RawMessage) bool {
	if c == nil || len(meta) > metaVerdictMaxLen {
		return modernMetaOK(version, meta)
	}
	c.mu.RLock()
	v, hit := c.m[string(meta)]
	c.mu.RUnlock()
	if hit {
		return v == version
	}
	if !modernMetaOK(version, meta) {
		return false
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= metaVerdictsMax {
		c.m = make(map[string]string)
	}
	c.m[string(meta)] = version
	c.mu.Unlock()
	return true
}

// modernResult is what mcp-go adds to a modern call's result: how to read
// it, and who answered.
type modernResult struct {
	server mcp.Implementation
	// serverJSON is server encoded, for the plain reply.
	serverJSON []byte
}

func newModernResult(name, version string) modernResult {
	impl := mcp.Implementation{Name: name, Version: version}
	b, _ := json.Marshal(impl)
	return modernResult{server: impl, serverJSON: b}
}

// decorate adds to res what mcp-go's decoration would.
func (m modernResult) decorate(res *mcp.CallToolResult) {
	if res.GetResultType() == "" {
		res.SetResultType(mcp.ResultTypeComplete)
	}
	if meta := res.EnsureResultMeta(); meta != nil && meta.ServerInfo() == nil {
		meta.SetServerInfo(m.server)
	}
}

// appendPlain appends the reply carrying res, a plainResult, with the
// modern result's members.
func (m modernResult) appendPlain(dst, id []byte, res *mcp.CallToolResult) []byte {
	text := res.Content[0].(mcp.TextContent).Text
	dst = slices.Grow(dst, 160+len(m.serverJSON)+len(id)+len(text)+len(text)/8+len(res.RawStructuredContent))
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{"_meta":{"`+mcp.MetaKeyServerInfo+`":`...)
	dst = append(dst, m.serverJSON...)
	dst = append(dst, `},"resultType":"`+string(mcp.ResultTypeComplete)+`","content":[{"type":"text","text":`...)
	dst = appendJSONString(dst, text)
	dst = append(dst, `}],"structuredContent":`...)
	dst = append(dst, res.RawStructuredContent...)
	return append(dst, "}}\n"...)
}
