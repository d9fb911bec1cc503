package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// client speaks Frappe's v1 REST API for one site, as one caller.
type client struct {
	site connector.Site
	http *http.Client
	// unavailable notes the fields that queries with AllowUnavailable
	// could not read (refused.go).
	unavailable unavailableFields
	// maxRecords is the site's cap on the rows of one query
	// (connector.Call.MaxRecords); 0 where the client serves no call.
	maxRecords int
}

func newClient(site connector.Site, hc *http.Client) *client {
	return &client{site: site, http: hc}
}

// callClient is the client of a tool call, which keeps its walks' pages
// within the site's row cap (pageOf).
func callClient(call *connector.Call) *client {
	c := newClient(call.Site, call.HTTP)
	c.maxRecords = call.MaxRecords
	return c
}

// pageOf is a walk's page size, size, within the site's row cap: a site
// whose operator or owner lowered its max_records is never asked for more
// rows a query than that (and the one more a last page asks for).
func (c *client) pageOf(size int) int {
	if c.maxRecords > 0 {
		return max(min(size, c.maxRecords), 1)
	}
	return size
}

// listQuery is one /api/resource list request.
type listQuery struct {
	Fields    []string
	Filters   filters
	OrFilters filters
	OrderBy   string
	GroupBy   string
	Start     int
	// PageLength is how many rows to ask for. It must be positive: Frappe
	// reads 0 as "every row", which erpgate never asks for.
	PageLength int
	// AllowUnavailable leaves out fields this user or site does not have
	// instead of failing, and notes them in client.unavailable
	// (refused.go).
	AllowUnavailable bool
}

func (q listQuery) values() url.Values {
	v := url.Values{}
	fields, _ := json.Marshal(q.Fields)
	v.Set("fields", string(fields))
	if len(q.Filters) > 0 {
		v.Set("filters", q.Filters.encode())
	}
	if len(q.OrFilters) > 0 {
		v.Set("or_filters", q.OrFilters.encode())
	}
	if q.OrderBy != "" {
		v.Set("order_by", q.OrderBy)
	}
	if q.GroupBy != "" {
		v.Set("group_by", q.GroupBy)
	}
	v.Set("limit_start", strconv.Itoa(q.Start))
	v.Set("limit_page_length", strconv.Itoa(max(q.PageLength, 1)))
	return v
}

// list runs a list query and returns the rows. Values keep Frappe's exact
// number text (json.Number), so amounts are never rounded on the way.
func (c *client) list(ctx context.Context, doctype string, q listQuery) ([]map[string]any, error) {
	if q.AllowUnavailable {
		q.AllowUnavailable = false
		return askAvailable(&c.unavailable, doctype, q, func(q listQuery) ([]map[string]any, error) { return c.list(ctx, doctype, q) }, mapHas)
	}
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := c.getJSON(ctx, "/api/resource/"+url.PathEscape(doctype), q.values(), &body); err != nil {
		return nil, fmt.Errorf("list %s: %w", doctype, err)
	}
	if body.Data == nil {
		return nil, invalidResponse("the list of %s had no data array", doctype)
	}
	return body.Data, nil
}

// listRows runs a list query and returns its rows as the ERP sent them,
// each a JSON object that is checked but not decoded. A page that is only
// passed on to the caller needs nothing more, and decoding rows into maps
// and encoding them again was most of the gateway's work on a list call.
func (c *client) listRows(ctx context.Context, doctype string, q listQuery) ([]json.RawMessage, error) {
	if q.AllowUnavailable {
		q.AllowUnavailable = false
		return askAvailable(&c.unavailable, doctype, q, func(q listQuery) ([]json.RawMessage, error) { return c.listRows(ctx, doctype, q) }, rawHas)
	}
	body, err := c.getBody(ctx, "/api/resource/"+url.PathEscape(doctype), q.values())
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", doctype, err)
	}
	rows, err := splitRows(body, doctype)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", doctype, err)
	}
	return rows, nil
}

// splitRows returns the elements of a list answer's data array, as slices
// of body. The body must be one JSON object (all of it is checked,
// trailing bytes included) whose data member is an array of objects;
// anything else is UPSTREAM_INVALID_RESPONSE. Bytes that are not UTF-8 are
// replaced with U+FFFD, as decoding would, so the rows are valid JSON text.
func splitRows(body []byte, doctype string) ([]json.RawMessage, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, invalidResponse("the ERP answered the list of %s with an empty body", doctype)
	}
	if !utf8.Valid(body) {
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	data, found, err := rawjson.Member(body, "data")
	if err != nil {
		return nil, outbound.InvalidJSON(err)
	}
	if !found || data[0] != '[' {
		return nil, invalidResponse("the list of %s had no data array", doctype)
	}
	// Member checked the whole body: its rows need only be found.
	rows := rawjson.ElementsChecked(data)
	for _, r := range rows {
		if r[0] != '{' {
			return nil, invalidResponse("a row of the list of %s was not an object", doctype)
		}
	}
	return rows, nil
}

// decodeRow decodes one row kept as JSON, numbers as json.Number.
func decodeRow(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := outbound.UnmarshalJSON(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// get fetches one document with its child tables.
func (c *client) get(ctx context.Context, doctype, name string) (map[string]any, error) {
	var body struct {
		Data map[string]any `json:"data"`
	}
	path := "/api/resource/" + url.PathEscape(doctype) + "/" + url.PathEscape(name)
	if err := c.getJSON(ctx, path, nil, &body); err != nil {
		return nil, fmt.Errorf("get %s %s: %w", doctype, name, err)
	}
	if body.Data == nil {
		return nil, invalidResponse("the %s document had no data object", doctype)
	}
	return body.Data, nil
}

// method calls a whitelisted method with GET and decodes its "message".
func (c *client) method(ctx context.Context, name string, params url.Values, message any) error {
	var body struct {
		Message json.RawMessage `json:"message"`
	}
	if err := c.getJSON(ctx, "/api/method/"+name, params, &body); err != nil {
		return fmt.Errorf("method %s: %w", name, err)
	}
	if len(body.Message) == 0 {
		return invalidResponse("the method %s returned no message", name)
	}
	return outbound.UnmarshalJSON(body.Message, message)
}

// count asks Frappe's permission-aware counter (the one the desk list view
// uses) how many rows match. frappe.client.get_count is deliberately not
// used: in v15 it ignores permissions and would count other companies'
// documents for a user restricted to one.
func (c *client) count(ctx context.Context, doctype string, f, or filters) (int, error) {
	v := url.Values{}
	v.Set("doctype", doctype)
	if len(f) > 0 {
		v.Set("filters", f.encode())
	}
	if len(or) > 0 {
		v.Set("or_filters", or.encode())
	}
	var n json.Number
	if err := c.method(ctx, "frappe.desk.reportview.get_count", v, &n); err != nil {
		return 0, fmt.Errorf("count %s: %w", doctype, err)
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, invalidResponse("the count of %s was not a whole number", doctype)
	}
	return int(i), nil
}

// childList lists rows of a child table through its parent DocType, which
// is how Frappe checks permission on child rows.
func (c *client) childList(ctx context.Context, child, parent string, q listQuery) ([]map[string]any, error) {
	var body struct {
		Data []map[string]any `json:"data"`
	}
	v := q.values()
	v.Set("parent", parent)
	if err := c.getJSON(ctx, "/api/resource/"+url.PathEscape(child), v, &body); err != nil {
		return nil, fmt.Errorf("list %s of %s: %w", child, parent, err)
	}
	if body.Data == nil {
		return nil, invalidResponse("the list of %s had no data array", child)
	}
	return body.Data, nil
}

func (c *client) loggedUser(ctx context.Context) (string, error) {
	var user string
	if err := c.method(ctx, "frappe.auth.get_logged_user", nil, &user); err != nil {
		return "", err
	}
	return user, nil
}

// getJSON sends a GET and decodes a 2xx JSON body into v; any other status
// becomes a classified error built from Frappe's error body.
func (c *client) getJSON(ctx context.Context, path string, q url.Values, v any) error {
	body, err := c.getBody(ctx, path, q)
	if err != nil {
		return err
	}
	return outbound.UnmarshalJSON(body, v)
}

// getBody fetches a JSON resource and returns its body, or the ERP's error.
func (c *client) getBody(ctx context.Context, path string, q url.Values) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.site.URL(path, q), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	return c.roundTrip(req, upstreamError)
}

// roundTrip sends a request for JSON and returns a 2xx body; any other
// status becomes the error fail builds from Frappe's error body.
func (c *client) roundTrip(req *http.Request, fail func(int, http.Header, []byte) *toolerr.Error) ([]byte, error) {
	return roundTripOn(c.http, req, fail)
}

// roundTripOn is roundTrip through hc.
func roundTripOn(hc *http.Client, req *http.Request, fail func(int, http.Header, []byte) *toolerr.Error) ([]byte, error) {
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		// The client's error names the request's URL with its query (the
		// call's filters) or a refused redirect's Location as the ERP
		// wrote it: by scheme, host and path only.
		return nil, outbound.BareURLs(err)
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if quotesCredential(body, resp.Request) {
			// Frappe's words go to the model and the operator: an answer
			// that quotes the credential the request carried is told by
			// its status alone.
			body = nil
		}
		return nil, fail(resp.StatusCode, resp.Header, body)
	}
	return body, nil
}

// quotesCredential reports whether body quotes the credential req carried
// in its Authorization header: a person's access token ("Bearer <token>")
// or a service connection's API key or secret ("token <key>:<secret>"),
// as sent or URL-encoded.
func quotesCredential(body []byte, req *http.Request) bool {
	if req == nil || len(body) == 0 {
		return false
	}
	_, cred, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	parts := []string{cred}
	if key, secret, ok := strings.Cut(cred, ":"); ok {
		parts = append(parts, key, secret)
	}
	text := string(body)
	for _, p := range parts {
		if len(p) >= 6 && (strings.Contains(text, p) || strings.Contains(text, url.QueryEscape(p))) {
			return true
		}
	}
	return false
}

// deskURL is the address of a document's page in Frappe's desk UI:
// /app/<doctype in kebab case>/<name>.
func (c *client) deskURL(doctype, name string) string {
	route := strings.ReplaceAll(strings.ToLower(doctype), " ", "-")
	return c.site.URL("/app/"+route+"/"+url.PathEscape(name), nil)
}
