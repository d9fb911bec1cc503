package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// giQuery is one read of an inquiry's data over OData v4.
type giQuery struct {
	name    string
	filter  string
	sel     []string
	orderBy string
	top     int
	params  map[string]string
}

// giPage is an OData v4 response ("@odata.context", or "odata.metadata"
// in the documented parameterised shape) with its rows.
type giPage struct {
	Context  string           `json:"@odata.context"`
	Metadata string           `json:"odata.metadata"`
	Value    []map[string]any `json:"value"`
}

// inquiryRows reads rows of an inquiry. q.top is what is asked of
// Acumatica.
func (c *client) inquiryRows(ctx context.Context, q giQuery, inq *giInquiry) ([]map[string]any, error) {
	if err := c.needTenant(); err != nil {
		return nil, err
	}
	segment := q.name
	if len(q.params) > 0 {
		if inq == nil || inq.Function == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "the inquiry %q takes no parameters", q.name)
		}
		segment = inq.Function + "(" + functionArgs(q.params) + ")"
	}
	v := url.Values{"$top": {fmt.Sprint(q.top)}}
	if q.filter != "" {
		v.Set("$filter", q.filter)
	}
	if len(q.sel) > 0 {
		v.Set("$select", strings.Join(q.sel, ","))
	}
	if q.orderBy != "" {
		v.Set("$orderby", q.orderBy)
	}
	r, err := c.get(ctx, c.giPath("/"+escapeSegment(segment)), v, "application/json")
	if err != nil {
		return nil, fmt.Errorf("read inquiry %s: %w", q.name, err)
	}
	if !r.ok() {
		return nil, c.inquiryError(ctx, r, q, inq)
	}
	if r.empty() {
		// Acumatica answers 200 without a body when a filter or sort names a
		// column its formula computes; that is not an empty result.
		return nil, invalidResponse("Acumatica answered the inquiry %q with HTTP %d and no body; it does this when filterExpression or orderBy uses a calculated (formula) column, so filter on a plain column instead", q.name, r.status)
	}
	var page giPage
	if err := outbound.UnmarshalJSON(r.body, &page); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "Acumatica's answer for the inquiry %q could not be read; this does not mean there are no records", q.name)
	}
	if page.Value == nil {
		return nil, invalidResponse("Acumatica's answer for the inquiry %q had no value array", q.name)
	}
	padded := page.Context == "" && page.Metadata != ""
	for _, row := range page.Value {
		cleanInquiryRow(row, inq, padded)
	}
	return page.Value, nil
}

// functionArgs writes parameters as OData function arguments,
// P1='v1',P2='v2', in a stable order.
func functionArgs(params map[string]string) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "='" + strings.ReplaceAll(params[n], "'", "''") + "'"
	}
	return strings.Join(parts, ",")
}

// cleanInquiryRow normalises one row: decimal columns sent as strings
// ("1999.000000", in the documented parameterised shape) become exact JSON
// numbers, and in that shape the CHAR(n) padding of text columns
// ("MAIN      ") is trimmed.
func cleanInquiryRow(row map[string]any, inq *giInquiry, padded bool) {
	for k, v := range row {
		s, ok := v.(string)
		if !ok {
			continue
		}
		var typ string
		if inq != nil {
			if col := inq.column(k); col != nil {
				typ = col.Type
			}
		}
		switch {
		case (typ == "Edm.Decimal" || typ == "Edm.Double") && jsonNumber.MatchString(strings.TrimSpace(s)):
			row[k] = json.Number(strings.TrimSpace(s))
		case padded:
			row[k] = strings.TrimRight(s, " ")
		}
	}
}

// jsonNumber is the JSON number grammar: a decimal string that matches
// it can be sent on as a number without changing a digit.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// inquiryError explains an unsuccessful GI answer.
func (c *client) inquiryError(ctx context.Context, r response, q giQuery, inq *giInquiry) error {
	f := parseFailure(r, q.filter != "" || len(q.sel) > 0 || q.orderBy != "" || len(q.params) > 0)
	object := "the inquiry " + quote(q.name)
	switch f.kind {
	case failQuery, failBadRequest:
		var cols []string
		if inq != nil {
			cols = inq.columnNames()
		}
		if q.filter != "" && filterAt(f.detail, q) {
			return toolerr.New(toolerr.InvalidArgument, "%s", explainFilter(dialectInquiry, q.filter, f.detail, cols, "inquiry "+q.name))
		}
		msg := fmt.Sprintf("Acumatica rejected the request for %s (%s); the query never ran, so no records were read", object, orUnknown(f.detail))
		if len(cols) > 0 {
			msg += ". Its columns: " + strings.Join(cols, ", ")
		}
		if inq != nil && len(inq.Parameters) > 0 {
			msg += ". Its parameters: " + strings.Join(columnNames(inq.Parameters), ", ")
		}
		return toolerr.New(toolerr.InvalidArgument, "%s", msg)
	case failForbidden:
		return toolerr.New(toolerr.PermissionDenied,
			"Acumatica says this user may not read %s (HTTP 403%s). Rights to an inquiry follow the user's Acumatica roles; an administrator has to grant them. Nothing was read",
			object, screenSuffix(f.screen))
	case failMissing:
		msg := fmt.Sprintf("tenant %q exposes no inquiry named %q over OData (HTTP 404)", c.set.Tenant, q.name)
		if m, err := c.inquiries(ctx); err == nil {
			var names []string
			for _, i := range m.Inquiries {
				names = append(names, i.Name)
			}
			if s := closestFields(q.name, names); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
		}
		return toolerr.New(toolerr.NotFound, "%s An inquiry must be published and have Expose via OData set (SM208000); acumatica_list_generic_inquiries lists the exposed ones", msg+".")
	}
	return c.commonError(f, object)
}

// filterAt guesses whether a rejection is about the filter rather than
// select, orderby or parameters: it names none of the others.
func filterAt(detail string, q giQuery) bool {
	d := strings.ToLower(detail)
	if strings.Contains(d, "$filter") || strings.Contains(d, "function") || strings.Contains(d, "literal") ||
		strings.Contains(d, "incompatible") || strings.Contains(d, "syntax error") || strings.Contains(d, "unterminated") {
		return true
	}
	if strings.Contains(d, "property named") {
		// The unknown property may be in $select or $orderby; attribute it
		// to the filter only if the filter names it.
		if m := reUnknownProp.FindStringSubmatch(detail); m != nil {
			return strings.Contains(q.filter, m[1])
		}
	}
	return len(q.sel) == 0 && q.orderBy == "" && len(q.params) == 0
}

func screenSuffix(screen string) string {
	if screen == "" {
		return ""
	}
	return ", form " + screen
}

func columnNames(cols []giColumn) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}
