package acumatica

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// contractOp describes one contract-API request, for the error a model
// sees when it fails.
type contractOp struct {
	entity   string
	keyNames []string
	keys     []string
	filter   string
	sel      string
	expand   string
	// archived asks for archived records too (PX-ApiArchive: SHOW), which
	// Acumatica otherwise leaves out of every answer.
	archived bool
}

// archiveHeader is what a request that includes archived records sends
// (api-facts.md §1.2, Acumatica's "Operate with Archived Records").
var archiveHeader = http.Header{"PX-ApiArchive": {"SHOW"}}

// headerOf is op's request header: archiveHeader or none.
func (op contractOp) headerOf() http.Header {
	if op.archived {
		return archiveHeader
	}
	return nil
}

// keysText renders the keys for a message: CustomerID 'C000001'.
func (op contractOp) keysText() string {
	parts := make([]string, len(op.keys))
	for i, k := range op.keys {
		name := "key"
		if i < len(op.keyNames) {
			name = op.keyNames[i]
		}
		parts[i] = fmt.Sprintf("%s '%s'", name, k)
	}
	return strings.Join(parts, ", ")
}

// getRecord reads one record by its keys, with expand and select. Keys
// that cannot travel in a URL path (keysNeedFilter) are looked up with a
// filter on the key fields instead. An archived record is read too: the
// keys name it, and without PX-ApiArchive: SHOW Acumatica would answer
// that no such record exists.
func (c *client) getRecord(ctx context.Context, op contractOp) (map[string]any, error) {
	op.archived = true
	if specs := keySpecsOf(op); keysNeedFilter(op.keys) || keysRouteElsewhere(op.keys, specs) {
		return c.getByFilter(ctx, op, specs)
	}
	q := url.Values{}
	if op.expand != "" {
		q.Set("$expand", op.expand)
	}
	if op.sel != "" {
		q.Set("$select", op.sel)
	}
	r, err := c.send(ctx, http.MethodGet, c.entityPath(op.entity, op.keys...), q, "application/json", nil, op.headerOf())
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", op.entity, err)
	}
	if !r.ok() {
		return nil, c.contractError(ctx, r, op)
	}
	var rec map[string]any
	if err := c.decode(r, &rec, "the "+op.entity+" record"); err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, invalidResponse("Acumatica answered with null instead of the %s record", op.entity)
	}
	return rec, nil
}

// keysRouteElsewhere reports keys that Acumatica would not read as key
// values in the path: a segment starting with "$" can name a route of its
// own (/Customer/$adHocSchema is the entity's empty template), and a lone
// text key shaped like a GUID is taken as the record's internal id, so
// /Customer/<GUID> is whichever customer has that id, not the one whose
// CustomerID it is. Such records are found with a filter on the key
// fields instead.
func keysRouteElsewhere(keys []string, specs []keySpec) bool {
	for _, k := range keys {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return len(keys) == 1 && len(specs) == 1 && specs[0].Kind == keyText && guidText.MatchString(keys[0])
}

// guidText matches the forms .NET parses as a GUID: with or without
// hyphens, optionally in braces or parentheses.
var guidText = regexp.MustCompile(`^[{(]?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}[)}]?$`)

// keySpecsOf is the key fields of op's entity: the getter's, which know
// each key's kind, or else op's key names as text.
func keySpecsOf(op contractOp) []keySpec {
	if g := getterOf(op.entity); len(g.Keys) == len(op.keys) {
		return g.Keys
	}
	specs := make([]keySpec, len(op.keyNames))
	for i, n := range op.keyNames {
		specs[i] = keySpec{Name: n}
	}
	return specs
}

// listRecords runs a list request and returns at most top rows, decoded.
func (c *client) listRecords(ctx context.Context, op contractOp, top int) ([]map[string]any, error) {
	raw, err := c.listRows(ctx, op, top)
	if err != nil {
		return nil, err
	}
	rows := make([]map[string]any, len(raw))
	for i, r := range raw {
		if err := c.decode(response{body: r}, &rows[i], "the list of "+op.entity); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// listRows runs a list request and returns at most top rows as Acumatica
// wrote them: the answer is checked to be an array of objects, and nothing
// is decoded.
func (c *client) listRows(ctx context.Context, op contractOp, top int) ([]json.RawMessage, error) {
	q := url.Values{"$top": {fmt.Sprint(top)}}
	if op.filter != "" {
		q.Set("$filter", op.filter)
	}
	if op.expand != "" {
		q.Set("$expand", op.expand)
	}
	if op.sel != "" {
		q.Set("$select", op.sel)
	}
	r, err := c.send(ctx, http.MethodGet, c.entityPath(op.entity), q, "application/json", nil, op.headerOf())
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", op.entity, err)
	}
	if !r.ok() {
		return nil, c.contractError(ctx, r, op)
	}
	what := "the list of " + op.entity
	if r.empty() {
		return nil, invalidResponse("Acumatica answered with an empty body instead of %s", what)
	}
	body := r.body
	if !utf8.Valid(body) {
		// As decoding would: the rows stay valid JSON text.
		body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	if t := bytes.TrimSpace(body); bytes.Equal(t, []byte("null")) {
		return nil, invalidResponse("Acumatica answered the list of %s with null instead of an array", op.entity)
	}
	rows, err := rawjson.Elements(body)
	if err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamInvalidResponse, err,
			"Acumatica's answer with %s could not be read as the expected JSON; this does not mean there are no records", what)
	}
	for _, row := range rows {
		if row[0] != '{' {
			return nil, invalidResponse("Acumatica's answer with %s had a row that is not a record", what)
		}
	}
	return rows, nil
}

// decode reads a 2xx JSON body. An empty or unreadable body is
// UPSTREAM_INVALID_RESPONSE, never an empty result.
func (c *client) decode(r response, v any, what string) error {
	if r.empty() {
		return invalidResponse("Acumatica answered with an empty body instead of %s", what)
	}
	if err := outbound.UnmarshalJSON(r.body, v); err != nil {
		return toolerr.Wrap(toolerr.UpstreamInvalidResponse, err,
			"Acumatica's answer with %s could not be read as the expected JSON; this does not mean there are no records", what)
	}
	return nil
}

func invalidResponse(format string, args ...any) *toolerr.Error {
	e := toolerr.New(toolerr.UpstreamInvalidResponse, format, args...)
	e.Message += "; this does not mean there are no records"
	return e
}

// endpointRow is one endpoint GET /entity lists.
type endpointRow struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// endpointList is GET /entity: the build and the endpoints the instance
// offers, as "Name/Version".
type endpointList struct {
	build     string
	rows      []endpointRow
	endpoints []string
}

// parseEndpointList reads GET /entity in either shape Acumatica sends: the
// wrapper {"version":{…},"endpoints":[…]} of current builds, or the bare
// array of endpoint rows of older ones (which carries no build). ok is
// false when the body lists no endpoint.
func parseEndpointList(body []byte) (endpointList, bool) {
	var root struct {
		Version struct {
			Build string `json:"acumaticaBuildVersion"`
		} `json:"version"`
		Endpoints []endpointRow `json:"endpoints"`
	}
	var l endpointList
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '[':
		if json.Unmarshal(body, &l.rows) != nil {
			return endpointList{}, false
		}
	case json.Unmarshal(body, &root) == nil:
		l.build, l.rows = root.Version.Build, root.Endpoints
	default:
		return endpointList{}, false
	}
	for _, e := range l.rows {
		l.endpoints = append(l.endpoints, e.Name+"/"+e.Version)
	}
	return l, len(l.rows) > 0
}

// endpoints lists the instance's endpoints as "Name/Version". It is used
// only to explain a 404, so any failure just yields nil.
func (c *client) endpoints(ctx context.Context) []string {
	raw, ok := c.cached(ctx, cacheKeyEndpoints)
	if !ok {
		r, err := c.get(ctx, "/entity", nil, "application/json")
		if err != nil || !r.ok() {
			return nil
		}
		raw = r.body
		c.store(ctx, cacheKeyEndpoints, raw, ttlEndpoints)
	}
	l, _ := parseEndpointList(raw)
	return l.endpoints
}
