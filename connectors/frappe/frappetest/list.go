package frappetest

import (
	"strings"
)

// listArgs are the frappe.client.get_list parameters.
type listArgs struct {
	doctype         string
	fields          any // decoded (list) or raw string
	filters         any
	orFilters       any
	groupBy         string
	orderBy         string
	limitStart      any
	limitPageLength any
	asDict          bool
	parent          string
}

// listResource is GET /api/resource/<doctype> (frappe/api/v1.py
// document_list).
func (rc *reqCtx) listResource(doctype string) *apiError {
	a := listArgs{doctype: doctype, asDict: true}
	if v, ok := rc.arg("fields"); ok && pyTruthy(v) {
		s, isStr := v.(string)
		if !isStr {
			return pythonError("TypeError", "the JSON object must be str, bytes or bytearray, not "+pyTypeName(v))
		}
		decoded, err := jsonLoads(s)
		if err != nil {
			return err
		}
		if decoded == nil {
			decoded = []any(nil)
		}
		a.fields = decoded
	}
	if v, ok := rc.arg("limit_page_length"); ok {
		a.limitPageLength = v
	} else if l, ok := rc.arg("limit"); ok && pyTruthy(l) {
		a.limitPageLength = l
	} else {
		a.limitPageLength = "20"
	}
	if v, ok := rc.arg("as_dict"); ok {
		a.asDict = sbool(v)
	}
	rc.commonListArgs(&a)
	rows, err := rc.getList(a)
	if err != nil {
		return err
	}
	return rc.respond("data", rows)
}

func (rc *reqCtx) commonListArgs(a *listArgs) {
	a.filters, _ = rc.arg("filters")
	a.orFilters, _ = rc.arg("or_filters")
	if v, ok := rc.arg("group_by"); ok {
		a.groupBy = cstr(v)
	}
	if v, ok := rc.arg("order_by"); ok {
		a.orderBy = cstr(v)
	}
	a.limitStart, _ = rc.arg("limit_start")
	if v, ok := rc.arg("parent"); ok {
		a.parent = cstr(v)
	}
}

// getList is frappe.client.get_list -> reportview.validate_args ->
// DatabaseQuery.execute, with Frappe's order of checks.
func (rc *reqCtx) getList(a listArgs) ([]any, *apiError) {
	reg := rc.s.reg
	if rc.s.missing(a.doctype) {
		return nil, doctypeNotFound(a.doctype)
	}
	meta := reg.get(a.doctype)
	if meta != nil && meta.IsTable {
		if err := rc.checkParentPermission(a.parent, a.doctype); err != nil {
			return nil, err
		}
	}
	// validate_args: parse_json
	var err *apiError
	if a.filters, err = parseJSONArg(a.filters); err != nil {
		return nil, err
	}
	if a.orFilters, err = parseJSONArg(a.orFilters); err != nil {
		return nil, err
	}
	if s, ok := a.fields.(string); ok && s != "" {
		if s == "*" {
			a.fields = []any{"*"}
		} else if a.fields, err = jsonLoads(s); err != nil {
			return nil, err
		}
	}
	fields, err := fieldStrings(a.fields)
	if err != nil {
		return nil, err
	}
	wildcard := len(fields) == 1 && fields[0] == "*"
	if wildcard {
		if meta == nil {
			return nil, doctypeNotFound(a.doctype)
		}
		fields = wildcardFields(meta)
	} else if err := validateFields(reg, a.doctype, fields); err != nil {
		return nil, err
	}
	fields = dropHighPermlevel(rc.user, reg, a.doctype, fields)
	if pyTruthy(a.filters) {
		if err := validateFilters(reg, a.doctype, a.filters); err != nil {
			return nil, err
		}
	}
	if pyTruthy(a.orFilters) {
		if err := validateFilters(reg, a.doctype, a.orFilters); err != nil {
			return nil, err
		}
	}
	// DatabaseQuery.execute
	if meta == nil {
		return nil, doctypeNotFound(a.doctype)
	}
	readDoctype := a.doctype
	if meta.IsTable {
		readDoctype = a.parent
	}
	if !canRead(rc.user, readDoctype) {
		return nil, listPermissionError(userName(rc.user), a.doctype)
	}
	if err := sanitizeFields(fields); err != nil {
		return nil, err
	}
	q := rc.newQuery(meta)
	if meta.IsTable {
		q.parentType = a.parent
	}
	q.asList = !a.asDict
	if len(fields) == 0 {
		fields = []string{"name"}
	}
	if err := q.bindSelect(fields); err != nil {
		return nil, err
	}
	if err := q.addFilters(a.doctype, a.filters, false, false); err != nil {
		return nil, err
	}
	if err := q.addFilters(a.doctype, a.orFilters, true, false); err != nil {
		return nil, err
	}
	if err := q.validateOrderGroup(a.orderBy); err != nil {
		return nil, err
	}
	if err := q.validateOrderGroup(a.groupBy); err != nil {
		return nil, err
	}
	if err := q.bindGroupBy(a.groupBy); err != nil {
		return nil, err
	}
	if err := q.bindOrderBy(a.orderBy); err != nil {
		return nil, err
	}
	q.limitStart = cint(a.limitStart)
	if a.limitPageLength == nil {
		q.limitPage = 20
	} else {
		q.limitPage = cint(a.limitPageLength)
	}
	if q.limitPage < 0 || (q.limitPage > 0 && q.limitStart < 0) {
		return nil, sqlSyntaxError(strings.TrimSpace("-" + strings.TrimPrefix(cstr(a.limitPageLength), "-")))
	}
	return q.execute(), nil
}

// newQuery starts a permission-aware query for the request's user.
func (rc *reqCtx) newQuery(meta *DocMeta) *query {
	return &query{ds: rc.s.dataset(), user: rc.user, today: rc.s.today, main: meta, applyUserPerms: true, accentSensitiveLike: rc.s.opts.AccentSensitiveLike}
}

// addFilters compiles filters (AND) or or_filters (OR) into the query.
func (q *query) addFilters(doctype string, filters any, or bool, noIfnull bool) *apiError {
	if !pyTruthy(filters) {
		return nil
	}
	conds, err := normaliseFilters(doctype, filters)
	if err != nil {
		return err
	}
	for _, c := range conds {
		p, err := q.compileFilter(c, noIfnull)
		if err != nil {
			return err
		}
		if or {
			q.orWhere = append(q.orWhere, p)
		} else {
			q.where = append(q.where, p)
		}
	}
	return nil
}

// parseJSONArg json.loads a truthy string argument.
func parseJSONArg(v any) (any, *apiError) {
	if s, ok := v.(string); ok && s != "" {
		return jsonLoads(s)
	}
	return v, nil
}

// checkParentPermission is frappe.client.check_parent_permission.
func (rc *reqCtx) checkParentPermission(parent, child string) *apiError {
	if parent == "" {
		return bareError("PermissionError")
	}
	pm := rc.s.reg.get(parent)
	if pm == nil {
		return doctypeNotFound(parent)
	}
	ok := false
	for _, tf := range pm.TableFields() {
		if tf.Options == child {
			ok = true
		}
	}
	if !ok || !canRead(rc.user, parent) {
		return bareError("PermissionError")
	}
	return nil
}
