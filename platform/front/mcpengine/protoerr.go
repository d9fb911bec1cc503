package mcpengine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/erpgate/erpgate/platform/connector"
)

// Protocol errors in erpgate's words.
//
// mcp-go answers a request it cannot serve with a JSON-RPC error whose
// message is its own error text, often with encoding/json's or
// encoding/base64's inside ("unparsable tools/call request: json: cannot
// unmarshal array into Go struct field ...", "illegal base64 data at input
// byte 0"), and refuses some requests in plain text. A client sees none of
// it: every JSON-RPC error mcp-go writes (through its transport, or through
// MCPServer.HandleMessage on the direct path) has its message replaced by
// one of erpgate's sentences, chosen by what went wrong (onProtocolError
// notes that from mcp-go's error value) or, for refusals no hook sees, by
// its code; params that are not as MCP defines them get -32602, not
// mcp-go's -32600. The code's data member (supported versions, the
// elicitations of a write's approval) is kept.

// rpcError is a JSON-RPC error's code and message.
type rpcError struct {
	code    int
	message string
}

// mcpToolName is MCP's rule for a tool name; a name that follows it may be
// quoted back to the client.
var mcpToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// methodName is method as a message may name it: one MCP defines, or
// "this method".
func methodName(method string) string {
	if knownMethod(method) {
		return method
	}
	return "this method"
}

// aMethod is methodName with its article: "an initialize", "a ping",
// "this method".
func aMethod(method string) string {
	name := methodName(method)
	switch {
	case !knownMethod(method):
		return name
	case strings.ContainsRune("aeiou", rune(name[0])):
		return "an " + name
	}
	return "a " + name
}

// protocolError is erpgate's answer for err, an error mcp-go's server
// returned for a method's request (message is the request as mcp-go
// decoded it), or false when the code alone says enough.
func protocolError(method string, message any, err error) (rpcError, bool) {
	var unparsable *server.UnparsableMessageError
	var corrupt base64.CorruptInputError
	switch {
	case errors.As(err, &unparsable):
		if sentence, ok := memberSentence(method, err); ok {
			return rpcError{mcp.INVALID_PARAMS, sentence}, true
		}
		return rpcError{mcp.INVALID_PARAMS, paramsSentence(method)}, true
	case errors.Is(err, server.ErrToolNotFound):
		name := "of that name"
		if req, ok := message.(*mcp.CallToolRequest); ok && mcpToolName.MatchString(req.Params.Name) {
			name = fmt.Sprintf("named %q", req.Params.Name)
		}
		return rpcError{mcp.INVALID_PARAMS, "this site offers no tool " + name + "; tools/list names the tools it offers"}, true
	case errors.As(err, &corrupt):
		return rpcError{mcp.INVALID_PARAMS, cursorSentence(method)}, true
	case errors.Is(err, server.ErrRemovedInProtocolVersion):
		return rpcError{mcp.METHOD_NOT_FOUND, methodName(method) + " is not part of protocol version " + mcp.ProtocolVersion20260728 + ", which this request uses"}, true
	case errors.Is(err, server.ErrRequiresModernProtocol):
		return rpcError{mcp.METHOD_NOT_FOUND, methodName(method) + " needs protocol version " + mcp.ProtocolVersion20260728 + "; this request uses an earlier one"}, true
	case errors.Is(err, server.ErrUnsupported):
		return rpcError{mcp.METHOD_NOT_FOUND, notOffered(method)}, true
	}
	return rpcError{}, false
}

func paramsSentence(method string) string {
	switch method {
	case string(mcp.MethodToolsCall):
		return "the params of a tools/call request must be a JSON object with the tool's name (a string) and its arguments (an object)"
	case string(mcp.MethodToolsList):
		return "the params of a tools/list request must be a JSON object; its cursor, if any, is a string from an earlier reply's nextCursor"
	}
	return "the params of " + aMethod(method) + " request are not as MCP defines them: they must be a JSON object whose members have the types MCP gives them"
}

// paramsMember is a member path of params as MCP names it, which may be
// quoted back to the client.
var paramsMember = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,3}$`)

// memberSentence names the member of params whose type is wrong and what
// it must be ("task must be an object"), when err, from decoding a
// method's request, says which; false when it is params itself.
func memberSentence(method string, err error) (string, bool) {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) || ute.Type == nil {
		return "", false
	}
	var path []string
	for _, part := range strings.Split(ute.Field, ".") {
		// Go's path names embedded structs (MultiRoundTripParams) too;
		// MCP's members begin in lower case or with _.
		if part == "" || part[0] >= 'A' && part[0] <= 'Z' {
			continue
		}
		path = append(path, part)
	}
	if len(path) < 2 || path[0] != "params" {
		return "", false
	}
	member := strings.Join(path[1:], ".")
	if !paramsMember.MatchString(member) {
		return "", false
	}
	return "the params of " + aMethod(method) + " request are not as MCP defines them: " + member + " must be " + connector.JSONKind(ute.Type), true
}

func cursorSentence(method string) string {
	if method == string(mcp.MethodToolsList) {
		return "the cursor is not one this server gave: send the nextCursor of an earlier tools/list reply, or no cursor for the first page"
	}
	return "the cursor is not one this server gave: send the nextCursor of an earlier reply, or no cursor for the first page"
}

func notOffered(method string) string {
	if knownMethod(method) {
		return "this server does not offer " + method
	}
	return "this server offers no method of that name"
}

// sentenceForCode is erpgate's answer for a JSON-RPC error of code that no
// hook explained: the transport's own refusals and HandleMessage's checks
// before dispatch.
func sentenceForCode(code int, method string, modern bool) rpcError {
	switch code {
	case mcp.PARSE_ERROR:
		return rpcError{code, "the request body is not valid JSON"}
	case mcp.INVALID_REQUEST:
		return rpcError{code, `this is not a JSON-RPC 2.0 request this server takes: send one object with "jsonrpc": "2.0", an id and a method`}
	case mcp.METHOD_NOT_FOUND:
		return rpcError{code, notOffered(method)}
	case mcp.INVALID_PARAMS:
		if modern {
			return rpcError{code, "a " + mcp.ProtocolVersion20260728 + " request's params must be a JSON object whose _meta names the protocol version (" +
				mcp.MetaKeyProtocolVersion + ") and the client's capabilities (" + mcp.MetaKeyClientCapabilities + ", an object)"}
		}
		return rpcError{code, paramsSentence(method)}
	case mcp.HEADER_MISMATCH:
		return rpcError{code, "the request's MCP headers do not match its body: send Mcp-Protocol-Version, Mcp-Method and, for tools/call, Mcp-Name as the body has them, and no Last-Event-ID"}
	case mcp.UNSUPPORTED_PROTOCOL_VERSION:
		return rpcError{code, "this server does not support the protocol version the request names; error.data lists those it does"}
	case mcp.MISSING_REQUIRED_CLIENT_CAPABILITY:
		return rpcError{code, "this request needs a client capability the request did not declare; error.data names it"}
	case mcp.URL_ELICITATION_REQUIRED:
		return rpcError{code, "this change waits for the user's approval: show the user the link in error.data, and call the tool again with the same arguments once they have approved it"}
	case mcp.INTERNAL_ERROR:
		return rpcError{code, "erpgate could not serve this request; the operator's logs have details"}
	}
	return rpcError{code, "erpgate could not serve this request"}
}

// errorReply is a JSON-RPC error reply, as mcp-go writes one.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error"`
}

// isErrorReply reports whether msg, one JSON-RPC message, is an error
// reply. It reads the members in order up to "result" or "error" (mcp-go
// writes jsonrpc and id first), so a large result is not scanned.
func isErrorReply(msg []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for range 4 {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case "error":
			return true
		case "result":
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// plainReply returns msg, one JSON-RPC message ending in whitespace or
// not, with its error's code and message replaced by erpgate's when it is
// an error reply; any other message is returned as it is.
func (st *requestState) plainReply(msg []byte) []byte {
	body := bytes.TrimRight(msg, " \r\n")
	if !isErrorReply(body) {
		return msg
	}
	var r errorReply
	if json.Unmarshal(body, &r) != nil {
		return msg
	}
	method, modern := "", false
	var noted *rpcError
	if st != nil {
		st.mu.Lock()
		method, noted = st.method, st.plainError
		st.mu.Unlock()
		modern = mcp.IsModernProtocol(st.header.Get(mcp.HeaderProtocolVersion))
	}
	e := sentenceForCode(r.Error.Code, method, modern)
	if noted != nil && r.Error.Code != mcp.URL_ELICITATION_REQUIRED {
		e = *noted
	}
	r.Error.Code, r.Error.Message = e.code, e.message
	if len(r.ID) == 0 {
		r.ID = json.RawMessage("null")
	}
	out, err := json.Marshal(r)
	if err != nil {
		return msg
	}
	return append(out, msg[len(body):]...)
}

// textRefusal is erpgate's JSON-RPC error for a refusal mcp-go's transport
// writes as plain text with status, for a request of method with header
// h: a POST whose content type is not JSON or a protocol version it does
// not support (400), a session it does not know (404), a DELETE on
// 2026-07-28, which has none (405).
func textRefusal(status int, method string, h http.Header) rpcError {
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); status == http.StatusBadRequest && method == http.MethodPost && (err != nil || mt != "application/json") {
		return rpcError{mcp.INVALID_REQUEST, "send MCP requests as JSON, with Content-Type: application/json"}
	}
	switch v := h.Get(mcp.HeaderProtocolVersion); {
	case status == http.StatusBadRequest && v != "" && !mcp.IsValidProtocolVersion(v):
		return rpcError{mcp.INVALID_REQUEST, "this server does not support the protocol version in the Mcp-Protocol-Version header; it supports " +
			strings.Join(protocolVersions, ", ")}
	case status == http.StatusNotFound:
		return rpcError{mcp.INVALID_REQUEST, "this server does not know this session: start a new one with initialize"}
	case status == http.StatusMethodNotAllowed:
		return rpcError{mcp.INVALID_REQUEST, "send MCP requests with POST"}
	}
	return rpcError{mcp.INVALID_REQUEST, "erpgate could not take this message"}
}
