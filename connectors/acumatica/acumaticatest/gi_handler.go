package acumaticatest

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// writeODataError writes an OData v4 error body
// ({"error":{"code":"","message":"…"}}).
func writeODataError(w http.ResponseWriter, status int, message string) {
	var b strings.Builder
	o := newJSONObject(&b)
	e := newJSONObject(o.key("error"))
	e.str("code", "")
	e.str("message", message)
	e.close()
	o.close()
	w.Header().Set("OData-Version", "4.0")
	writeJSON(w, status, b.String())
}

var reWithParams = regexp.MustCompile(`^(.+)_WithParameters\((.*)\)$`)

// handleGI serves /t/{tenant}/api/odata/gi[/…]; rest is what follows "gi".
func (s *Simulator) handleGI(w http.ResponseWriter, r *http.Request, tenant, rest string) {
	if !strings.EqualFold(tenant, s.tenant) {
		writeNotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	p := s.authenticate(w, r, true)
	if p == nil {
		return
	}
	ctx := baseURL(r) + "/t/" + url.PathEscape(s.tenant) + "/api/odata/gi/$metadata"
	switch rest {
	case "", "/":
		s.giServiceDocument(w, ctx)
		return
	case "/$metadata":
		w.Header().Set("OData-Version", "4.0")
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(s.giMetadata()))
		return
	}
	name := strings.TrimPrefix(rest, "/")
	var params map[string]string
	legacy := false
	if m := reWithParams.FindStringSubmatch(name); m != nil {
		q := s.inquiryByType(m[1])
		if q == nil || len(q.Parameters) == 0 {
			writeODataError(w, http.StatusNotFound, fmt.Sprintf("No HTTP resource was found that matches the request URI '%s'.", requestURL(r)))
			return
		}
		var err error
		if params, err = parseFunctionParams(m[2], q); err != nil {
			writeODataError(w, http.StatusBadRequest, err.Error())
			return
		}
		name, legacy = q.Name, true
	}
	q := s.data.Inquiry(name)
	if q == nil {
		writeODataError(w, http.StatusNotFound, fmt.Sprintf("No HTTP resource was found that matches the request URI '%s'.", requestURL(r)))
		return
	}
	if !s.canReadInquiry(p.user, q) {
		writeJSON(w, http.StatusForbidden, httpError(insufficientRights(q.Screen)))
		return
	}
	// Acumatica documents two shapes of rows: the plain one of an
	// unfiltered read (Customer Contacts), and the legacy one of a
	// parameterised or filtered read (Item Availability Data, Modified
	// Stock Items): "odata.metadata", decimals as strings, date-times
	// without an offset, CHAR columns space-padded.
	legacy = legacy || strings.TrimSpace(r.URL.Query().Get("$filter")) != ""
	s.giData(w, r, q, params, legacy, ctx)
}

func (s *Simulator) inquiryByType(typeName string) *Inquiry {
	for _, q := range s.data.inquiries {
		if q.TypeName() == typeName {
			return q
		}
	}
	return nil
}

// parseFunctionParams reads P1='v1',P2='v2'.
func parseFunctionParams(s string, q *Inquiry) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range splitParams(s) {
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if !ok || len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
			return nil, fmt.Errorf("The query specified in the URI is not valid. Syntax error in function parameters '%s'.", s)
		}
		known := false
		for _, p := range q.Parameters {
			known = known || p.Name == k
		}
		if !known {
			return nil, fmt.Errorf("The parameter '%s' is not in scope.", k)
		}
		out[k] = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return out, nil
}

func splitParams(s string) []string {
	var parts []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		parts = append(parts, s[start:])
	}
	return parts
}

func (s *Simulator) giServiceDocument(w http.ResponseWriter, ctx string) {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("@odata.context", ctx)
	vb := o.key("value")
	vb.WriteByte('[')
	for i, q := range s.data.inquiries {
		if i > 0 {
			vb.WriteByte(',')
		}
		e := newJSONObject(vb)
		e.str("name", q.Name)
		e.str("kind", "EntitySet")
		e.str("url", q.Name)
		e.close()
	}
	vb.WriteByte(']')
	o.close()
	w.Header().Set("OData-Version", "4.0")
	writeJSON(w, http.StatusOK, b.String())
}

// giScope resolves $filter members against inquiry columns; formula is
// set when the filter names a formula column.
type giScope struct {
	q       *Inquiry
	formula *bool
}

func (g giScope) typeName() string { return "GenericInquiry." + g.q.TypeName() }

func (g giScope) member(path []string) (string, func(any) any, error) {
	if len(path) != 1 {
		return "", nil, &filterError{fmt.Sprintf("Could not find a property named '%s' on type '%s'.", path[0], g.typeName())}
	}
	c := g.q.column(path[0])
	if c == nil {
		return "", nil, &filterError{fmt.Sprintf("Could not find a property named '%s' on type '%s'.", path[0], g.typeName())}
	}
	name := c.Name
	typ := c.Type
	if c.Formula && g.formula != nil {
		*g.formula = true
	}
	return typ, func(row any) any {
		v := row.(map[string]any)[name]
		if s, ok := v.(string); ok && typ == "Edm.Guid" {
			return strings.ToLower(s)
		}
		return v
	}, nil
}

func (s *Simulator) giData(w http.ResponseWriter, r *http.Request, q *Inquiry, params map[string]string, legacy bool, ctx string) {
	qs := r.URL.Query()
	for _, opt := range []string{"$expand", "$count", "$apply", "$search"} {
		if qs.Has(opt) {
			writeODataError(w, http.StatusBadRequest, fmt.Sprintf("The query specified in the URI is not valid. Query option '%s' is not allowed. To allow it, set the 'AllowedQueryOptions' property on EnableQueryAttribute or QueryValidationSettings.", strings.ToUpper(opt[1:2])+opt[2:]))
			return
		}
	}
	rows := s.inquiryRows(q)
	if q.match != nil && params != nil {
		var sel []map[string]any
		for _, row := range rows {
			if q.match(row, params) {
				sel = append(sel, row)
			}
		}
		rows = sel
	}
	if f := qs.Get("$filter"); strings.TrimSpace(f) != "" {
		formula := false
		pred, err := compileFilter(f, odataV4, giScope{q, &formula})
		if err != nil {
			writeODataError(w, http.StatusBadRequest, "The query specified in the URI is not valid. "+err.Error())
			return
		}
		if formula {
			writeFormulaQuery(w)
			return
		}
		var sel []map[string]any
		for _, row := range rows {
			if pred(row) {
				sel = append(sel, row)
			}
		}
		rows = sel
	}
	if ob := qs.Get("$orderby"); strings.TrimSpace(ob) != "" {
		sorted, err := orderRows(q, rows, ob)
		if err != nil {
			writeODataError(w, http.StatusBadRequest, "The query specified in the URI is not valid. "+err.Error())
			return
		}
		for _, part := range strings.Split(ob, ",") {
			if c := q.column(strings.Fields(part)[0]); c.Formula {
				writeFormulaQuery(w)
				return
			}
		}
		rows = sorted
	}
	skip, top := 0, -1
	for opt, dst := range map[string]*int{"$skip": &skip, "$top": &top} {
		if v := qs.Get(opt); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				writeODataError(w, http.StatusBadRequest, fmt.Sprintf("The query specified in the URI is not valid. Invalid value '%s' for %s query option found.", v, opt))
				return
			}
			*dst = n
		}
	}
	cols := q.Columns
	if sel := qs.Get("$select"); strings.TrimSpace(sel) != "" {
		cols = nil
		for _, n := range strings.Split(sel, ",") {
			c := q.column(strings.TrimSpace(n))
			if c == nil {
				writeODataError(w, http.StatusBadRequest, fmt.Sprintf("The query specified in the URI is not valid. Could not find a property named '%s' on type 'GenericInquiry.%s'.", strings.TrimSpace(n), q.TypeName()))
				return
			}
			cols = append(cols, *c)
		}
	}
	if skip >= len(rows) {
		rows = nil
	} else {
		rows = rows[skip:]
	}
	if top >= 0 && top < len(rows) {
		rows = rows[:top]
	}
	var b strings.Builder
	o := newJSONObject(&b)
	if legacy {
		// The documented parameterised response: legacy context key,
		// decimals as strings, CHAR columns space-padded.
		o.str("odata.metadata", ctx+"#"+strings.ReplaceAll(url.PathEscape(q.Name), "+", "%20"))
	} else {
		o.str("@odata.context", ctx+"#"+strings.ReplaceAll(url.PathEscape(q.Name), "+", "%20"))
	}
	vb := o.key("value")
	vb.WriteByte('[')
	for i, row := range rows {
		if i > 0 {
			vb.WriteByte(',')
		}
		ro := newJSONObject(vb)
		for _, c := range cols {
			ro.raw(c.Name, giJSON(row[c.Name], c, legacy))
		}
		ro.close()
	}
	vb.WriteByte(']')
	o.close()
	w.Header().Set("OData-Version", "4.0")
	writeJSON(w, http.StatusOK, b.String())
}

// writeFormulaQuery is the answer to a $filter or $orderby that names a
// formula column: HTTP 200 with no body at all (api-facts.md 6.3, [G26]:
// "fields calculated by formulas can't be filtered/sorted; such a request
// may return 200 with no body").
func writeFormulaQuery(w http.ResponseWriter) {
	w.Header().Set("OData-Version", "4.0")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// giJSON renders an inquiry value as plain JSON.
func giJSON(v any, c InquiryColumn, legacy bool) string {
	if !legacy {
		return InquiryValue(v)
	}
	switch x := v.(type) {
	case string:
		if c.Padded > len(x) {
			x += strings.Repeat(" ", c.Padded-len(x))
		}
		return jsonString(x)
	case InquiryDecimal:
		return jsonString(x.String())
	case time.Time:
		return jsonString(formatLegacyGIDateTime(x))
	}
	return InquiryValue(v)
}

// orderRows applies $orderby (comma-separated "Column [asc|desc]").
func orderRows(q *Inquiry, rows []map[string]any, spec string) ([]map[string]any, error) {
	type key struct {
		name string
		desc bool
	}
	var keys []key
	for _, part := range strings.Split(spec, ",") {
		f := strings.Fields(part)
		if len(f) == 0 || len(f) > 2 || q.column(f[0]) == nil {
			return nil, fmt.Errorf("Could not find a property named '%s' on type 'GenericInquiry.%s'.", strings.TrimSpace(part), q.TypeName())
		}
		keys = append(keys, key{f[0], len(f) == 2 && strings.EqualFold(f[1], "desc")})
	}
	out := append([]map[string]any(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		for _, k := range keys {
			a, b := out[i][k.name], out[j][k.name]
			if a == nil && b == nil {
				continue
			}
			var c int
			switch {
			case a == nil:
				c = -1
			case b == nil:
				c = 1
			default:
				c, _ = cmpAny(a, b)
			}
			if c != 0 {
				return c < 0 != k.desc
			}
		}
		return false
	})
	return out, nil
}
