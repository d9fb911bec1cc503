package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// Shared parts of the write tools (tools_writes.go): the requests that
// change data and what Frappe's refusals mean for them.

// approvalNote ends every write tool's description.
const approvalNote = " The first call changes nothing: it returns an approval link (APPROVAL_REQUIRED) that the user must open, check and approve in erpgate, outside this chat. " +
	"Show the link to the user, and once they say they approved, call the tool again with exactly the same arguments; only that call writes. " +
	"The ERP's own permissions still decide: PERMISSION_DENIED means this ERP user may not make the change."

// unlessSent runs an approved write's handler and flags its failure as
// having written nothing (toolerr's NothingWritten: the approval holds
// for the same call) when it failed before any request but a read (GET,
// HEAD) was sent: the handler had only read. A refusal because the ERP no
// longer holds what was approved is left as it is: that approval does not
// hold.
func unlessSent(handler func(context.Context, *connector.Call) (any, error)) func(context.Context, *connector.Call) (any, error) {
	return func(ctx context.Context, call *connector.Call) (any, error) {
		watched := *call
		w := &writeWatch{next: http.DefaultTransport}
		if call.HTTP != nil {
			hc := *call.HTTP
			if hc.Transport != nil {
				w.next = hc.Transport
			}
			hc.Transport = w
			watched.HTTP = &hc
		}
		out, err := handler(ctx, &watched)
		if err == nil || w.sent.Load() {
			return out, err
		}
		return nil, toolerr.UnsentWrite(err)
	}
}

// writeWatch notes whether a request other than a read was handed to the
// ERP's transport.
type writeWatch struct {
	next http.RoundTripper
	sent atomic.Bool
}

func (w *writeWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.sent.Store(true)
	}
	return w.next.RoundTrip(r)
}

// send makes one write request with a JSON body and returns the ERP's
// 2xx body; anything else is the ERP's refusal, classified for a write.
func (c *client) send(ctx context.Context, method, path string, body any) ([]byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.site.URL(path, nil), bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	// A redirect is the write's answer, never followed: a 303 would turn
	// it into a GET of another address, whose answer is no answer to the
	// write, and a 307 or 308 would send the change a second time.
	hc := *c.http
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return roundTripOn(&hc, req, writeError)
}

// sendDoc makes a write whose answer carries one document under key
// ("data" for /api/resource, "message" for /api/method).
func (c *client) sendDoc(ctx context.Context, method, path, key string, body any) (map[string]any, error) {
	raw, err := c.send(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	var env map[string]json.RawMessage
	if err := outbound.UnmarshalJSON(raw, &env); err != nil {
		return nil, err
	}
	var doc map[string]any
	if len(env[key]) == 0 || outbound.UnmarshalJSON(env[key], &doc) != nil || doc == nil {
		return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP accepted the change but its answer had no %s document; check the ERP before trying again", key)
	}
	return doc, nil
}

func resourcePath(doctype, name string) string {
	p := "/api/resource/" + url.PathEscape(doctype)
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// writeError classifies Frappe's refusal of a write. The ERP decides:
// its own message is quoted (without HTML), never a guess; it is also
// kept apart (toolerr.Error.ERPSaid) for the approval page to quote.
//
// Only an answer in Frappe's own shape (its error body, which always
// names the exception's exc_type) is its refusal: Frappe raised, and
// rolled the request's transaction back. Any other answer below 500 (an
// nginx page, an empty body, a gateway's JSON) may come from something in
// front of Frappe after the request reached it, so whether the change was
// made is not known.
func writeError(status int, header http.Header, body []byte) *toolerr.Error {
	var fe frappeError
	_ = json.Unmarshal(body, &fe)
	if status >= 300 && status <= 399 {
		return toolerr.New(toolerr.UpstreamInvalidResponse,
			"the approved change was answered with a redirect (HTTP %d) instead of the ERP's answer; erpgate does not send a change on to another address, and whether the ERP made it is not known: look at the document in the ERP before trying again",
			status)
	}
	if strings.TrimSpace(fe.ExcType) == "" && status < 500 {
		return toolerr.New(toolerr.UpstreamInvalidResponse,
			"the approved change was answered with HTTP %d, but not in Frappe's own words (a proxy or load balancer in front of the ERP may have answered after it received the change), so whether the ERP made it is not known: look at the document in the ERP before trying again",
			status)
	}
	said := fe.userMessage()
	detail := said
	if detail == "" {
		detail = fe.ExcType
	}
	var e *toolerr.Error
	switch {
	case fe.ExcType == "TimestampMismatchError":
		e = toolerr.New(toolerr.ApprovalExpired, "the document changed in the ERP after the change was approved, so nothing was written (the ERP said: %s); call the tool again to see a new preview and ask for a new approval", detail)
	case status == http.StatusForbidden:
		e = connector.HTTPError(status, "the ERP refused this change for this user (HTTP 403): "+detail, 0)
	case status == http.StatusNotFound:
		e = connector.HTTPError(status, "not found in the ERP (HTTP 404): "+detail, 0)
	case status == http.StatusConflict:
		e = connector.HTTPError(status, fmt.Sprintf("the ERP refused the change as a duplicate (HTTP 409 %s): %s", fe.ExcType, detail), 0)
	case status == http.StatusExpectationFailed:
		e = connector.HTTPError(status, fmt.Sprintf("the ERP refused the change (%s): %s", fe.ExcType, detail), 0)
	default:
		return upstreamError(status, header, body)
	}
	e.SaidByERP(said)
	if e.Code != toolerr.ApprovalExpired {
		// Frappe refused the handler's one write request and rolled its
		// transaction back: nothing was written, and the approval holds
		// for the same call. A document changed since the approval is
		// another matter: that approval no longer holds.
		e.WroteNothing()
	}
	return e
}

// readAsCaller reads one document for a preview, turning the ERP's 404
// into a sentence naming what is missing.
func readAsCaller(ctx context.Context, c *client, doctype, name string) (map[string]any, error) {
	doc, err := c.get(ctx, doctype, name)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.NotFound {
			return nil, toolerr.Wrap(toolerr.NotFound, err, "there is no %s %q in the ERP (%s)", doctype, name, te.Message)
		}
		return nil, err
	}
	return doc, nil
}

// approvedVersion returns the modified stamp the person approved.
func approvedVersion(call *connector.Call) (string, error) {
	if call.Approved == nil || call.Approved.Preview.Version == "" {
		return "", toolerr.New(toolerr.ApprovalInvalid, "this change has no approved preview to check the document against; call the tool again for a new approval")
	}
	return call.Approved.Preview.Version, nil
}

// text renders an ERP value for a preview ("" for null).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// amountPrecision is how the ERP rounds a document's rates and amounts
// (Currency fields): ERPNext v15 rounds each to System Settings'
// currency_precision when it is set, else to its number format's places
// (frappe.model.meta.get_field_precision), whatever the document's
// currency, with System Settings' rounding_method.
type amountPrecision struct {
	places  int
	toEven  bool   // a tie rounds to even
	warning string // for the approval page when System Settings could not be read
	// qtyPlaces is the precision of Float fields such as a line's qty:
	// System Settings' float_precision, 3 when it is unset or cannot be
	// read (get_field_precision: cint(float_precision) or 3).
	qtyPlaces int
	// qtyToEven: a qty's tie rounds to even (flt under the site's
	// rounding_method, at qtyPlaces).
	qtyToEven bool
}

// numberFormatPlaces are the decimal places of Frappe's number formats
// (frappe.utils.number_format_info); Frappe gives any other two.
var numberFormatPlaces = map[string]int{
	"#,###.##": 2, "#.###,##": 2, "# ###.##": 2, "# ###,##": 2, "#'###.##": 2, "#, ###.##": 2,
	"#,##,###.##": 2, "#,###.###": 3, "#.###": 0, "#,###": 0, "#.########": 8,
}

// readAmountPrecision reads the site's precision of Currency fields from
// System Settings, as the caller. Only a System Manager may read it: for
// anyone else (or when the read fails) it is two places, ERPNext's
// default, with a warning for the approval page.
func readAmountPrecision(ctx context.Context, c *client) amountPrecision {
	doc, err := c.get(ctx, "System Settings", "System Settings")
	if err != nil {
		why := "erpgate could not read the ERP's currency precision (System Settings)"
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.PermissionDenied {
			why = "Only a System Manager may read the ERP's currency precision (System Settings)"
		}
		return amountPrecision{places: 2, qtyPlaces: defaultFloatPlaces, warning: why + ", so the amounts are shown to two decimal places, ERPNext's default: a site set to keep amounts to other places (three for dinars, none for yen) saves them rounded otherwise."}
	}
	places := 2
	if n, err := strconv.Atoi(strings.TrimSpace(text(doc["currency_precision"]))); err == nil && n > 0 {
		places = min(n, columnPlaces) // cint: "" and "0" are not set
	} else if n, ok := numberFormatPlaces[str(doc["number_format"])]; ok {
		places = n
	}
	// flt's rounding_method: "Banker's Rounding (legacy)", the default,
	// rounds a tie up, except at precision 0, where it goes to even;
	// "Banker's Rounding" always to even; "Commercial Rounding" away from
	// zero (amounts here are positive).
	qtyPlaces := defaultFloatPlaces
	if n, err := strconv.Atoi(strings.TrimSpace(text(doc["float_precision"]))); err == nil && n > 0 {
		qtyPlaces = min(n, columnPlaces)
	}
	method := str(doc["rounding_method"])
	return amountPrecision{places: places, toEven: tieToEven(method, places), qtyPlaces: qtyPlaces, qtyToEven: tieToEven(method, qtyPlaces)}
}

// tieToEven reports whether flt rounds a tie at places to even under a
// rounding_method (frappe.utils.data.rounded): "Banker's Rounding" always;
// "Banker's Rounding (legacy)", the default, only at precision 0, above
// it a tie rounds up; "Commercial Rounding" never (away from zero).
func tieToEven(method string, places int) bool {
	switch method {
	case "Banker's Rounding":
		return true
	case "Commercial Rounding":
		return false
	}
	return places == 0
}

// round renders r rounded to the precision.
func (p amountPrecision) round(r *big.Rat) string {
	return roundRatTies(r, p.places, p.toEven)
}

// roundQty renders a qty rounded as ERPNext saves it: to the float
// precision, a tie as the site's rounding_method says.
func (p amountPrecision) roundQty(q *big.Rat) string {
	return roundRatTies(q, p.qtyPlaces, p.qtyToEven)
}

// writtenProps are the output fields every write tool returns about the
// document it wrote.
func writtenProps(extra ...schema.Property) *schema.Schema {
	props := []schema.Property{
		schema.Prop("doctype", schema.String("Document type written.")).Required(),
		schema.Prop("name", schema.String("The document's name in the ERP.")).Required(),
		schema.Prop("url", schema.String("The document's page in the ERP.")).Required(),
		schema.Prop("modified", schema.String("The ERP's modified stamp after the write.")).Required(),
	}
	return schema.Object(append(props, extra...)...)
}

// OwnUnauthorized reports whether a 401 is Frappe's own: its error body
// naming one of the exceptions Frappe answers 401 with (AuthenticationError,
// SessionExpired, InvalidKeyError; shared/erp-api/frappe/api-facts.md §2.1,
// §3), raised by validate_auth before the request ran. The transport
// renews the credential and sends a write again only after such a 401
// (connector.OwnUnauthorized); any other 401 to a write is an outcome not
// known (writeError).
func (*Connector) OwnUnauthorized(_ http.Header, body []byte) bool {
	var fe frappeError
	if json.Unmarshal(body, &fe) != nil {
		return false
	}
	switch fe.ExcType {
	case "AuthenticationError", "SessionExpired", "InvalidKeyError":
		return true
	}
	return false
}

var _ connector.OwnUnauthorized = (*Connector)(nil)
