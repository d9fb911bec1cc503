package frappe

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

func invalidResponse(format string, args ...any) *toolerr.Error {
	e := toolerr.New(toolerr.UpstreamInvalidResponse, format, args...)
	e.Message += "; this does not mean there are no records"
	return e
}

// frappeError is the JSON body Frappe sends with a failed /api request.
type frappeError struct {
	ExcType        string `json:"exc_type"`
	Exception      string `json:"exception"`
	ServerMessages string `json:"_server_messages"`
	ErrorMessage   string `json:"_error_message"`
}

// upstreamError classifies a non-2xx Frappe answer: the code is the
// shared mapping of its HTTP status (connector.StatusCode); the message
// quotes only Frappe's own user-facing messages (never a traceback) and
// says what it means for the caller.
func upstreamError(status int, header http.Header, body []byte) *toolerr.Error {
	var fe frappeError
	_ = json.Unmarshal(body, &fe)
	detail := fe.userMessage()
	with := func(prefix string) string {
		if detail == "" {
			return prefix
		}
		return prefix + ": " + detail
	}
	var msg string
	var retryAfter time.Duration
	switch connector.StatusCode(status) {
	case toolerr.AuthExpired:
		msg = "the ERP did not accept the credentials for this connection (HTTP 401); sign in again or ask the operator to renew the API credential"
	case toolerr.PermissionDenied:
		msg = with("the ERP refused access for this user (HTTP 403); their role or user permissions do not allow it")
	case toolerr.NotFound:
		msg = with("not found in the ERP (HTTP 404)")
	case toolerr.InvalidArgument:
		if field, ok := refusedFieldIn(fe, detail); ok {
			e := connector.HTTPError(status, fmt.Sprintf("the ERP has no field %s that this user may query (HTTP 417 %q): this site lacks it, or field permissions hide it from this user; leave out the argument that filters or sorts by it", bareColumn(field), detail), 0)
			e.Err = &refusedField{field: field}
			return e
		}
		msg = with("the ERP rejected the query (HTTP " + http.StatusText(status) + ")")
	case toolerr.RateLimited:
		msg = "the ERP is rate limiting requests (HTTP 429); wait and retry"
		retryAfter = outbound.ParseRetryAfter(header.Get("Retry-After"), time.Now())
	case toolerr.UpstreamTimeout:
		msg = fmt.Sprintf("the ERP timed out (HTTP %d); nothing was returned, which does not mean there are no records", status)
	case toolerr.UpstreamUnavailable:
		msg = fmt.Sprintf("the ERP failed with HTTP %d%s; nothing was returned, which does not mean there are no records", status, suffix(fe.ExcType))
	default:
		msg = fmt.Sprintf("the ERP answered with unexpected HTTP %d", status)
	}
	return connector.HTTPError(status, msg, retryAfter)
}

func suffix(excType string) string {
	if excType == "" {
		return ""
	}
	return " (" + excType + ")"
}

// tagPattern matches an HTML tag: "<" then a tag name (or "/" and one),
// so the comparison signs of a message ("=, !=, >, <, >=") stay.
var tagPattern = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>`)

// userMessage returns the text of Frappe's _server_messages (a JSON string
// holding a list of JSON strings) or _error_message, without HTML.
func (fe frappeError) userMessage() string {
	var msgs []string
	var encoded []string
	if fe.ServerMessages != "" && json.Unmarshal([]byte(fe.ServerMessages), &encoded) == nil {
		for _, e := range encoded {
			var m struct {
				Message string `json:"message"`
			}
			if json.Unmarshal([]byte(e), &m) == nil && m.Message != "" {
				msgs = append(msgs, cleanText(m.Message))
			}
		}
	}
	if len(msgs) == 0 && fe.ErrorMessage != "" {
		msgs = append(msgs, cleanText(fe.ErrorMessage))
	}
	out := strings.Join(msgs, "; ")
	if len(out) > 500 {
		out = connector.CutText(out, 500) + "…"
	}
	return out
}

func cleanText(s string) string {
	s = tagPattern.ReplaceAllString(s, "")
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}
