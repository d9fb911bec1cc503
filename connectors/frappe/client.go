package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/outbound"
)

// client speaks Frappe's v1 REST API for one site, as one caller.
type client struct {
	site connector.Site
	http *http.Client
}

func newClient(site connector.Site, hc *http.Client) *client {
	return &client{site: site, http: hc}
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.site.URL(path, q), nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	body, err := outbound.ReadBody(resp)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return upstreamError(resp.StatusCode, resp.Header, body)
	}
	return outbound.UnmarshalJSON(body, v)
}
