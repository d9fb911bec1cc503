package frappetest

import (
	"net/http"
	"strings"
	"time"
)

// methodFunc handles one whitelisted /api/method call.
type methodFunc func(rc *reqCtx) *apiError

// whitelisted maps dotted method paths to handlers; allowGuest lists the
// ones Guest may call.
var whitelisted = map[string]methodFunc{
	"frappe.auth.get_logged_user":         (*reqCtx).methodLoggedUser,
	"frappe.client.get_list":              (*reqCtx).methodGetList,
	"frappe.client.get_count":             (*reqCtx).methodClientCount,
	"frappe.client.get":                   (*reqCtx).methodClientGet,
	"frappe.desk.reportview.get_count":    (*reqCtx).methodReportviewCount,
	"frappe.desk.query_report.run":        (*reqCtx).methodQueryReportRun,
	"frappe.desk.query_report.get_script": (*reqCtx).methodQueryReportGetScript,
	"frappe.client.submit":                (*reqCtx).methodSubmit,
	"frappe.desk.form.utils.add_comment":  (*reqCtx).methodAddComment,
	"login":                               (*reqCtx).methodLogin,
	"logout":                              (*reqCtx).methodLogout,
}

var allowGuest = map[string]bool{"login": true, "logout": true}

// knownModules are importable modules, for "Failed to get method" errors.
var knownModules = map[string]bool{
	"frappe": true, "frappe.auth": true, "frappe.client": true, "frappe.desk": true,
	"frappe.desk.reportview": true, "frappe.desk.form": true, "frappe.desk.form.utils": true, "frappe.desk.query_report": true, "frappe.integrations": true,
	"frappe.integrations.oauth2": true, "frappe.handler": true, "erpnext": true,
	"frappe.utils": true, "frappe.utils.change_log": true,
}

// callMethod is frappe.handler.execute_cmd.
func (rc *reqCtx) callMethod(method string) *apiError {
	fn, ok := whitelisted[method]
	if !ok {
		return validationError("Failed to get method for command " + method + " with " + importError(method))
	}
	if rc.user == nil && !allowGuest[method] {
		return methodNotAllowedForGuest(method)
	}
	return fn(rc)
}

// importError is the Python error frappe.get_attr would hit.
func importError(method string) string {
	i := strings.LastIndex(method, ".")
	if i < 0 {
		return "Empty module name"
	}
	module := method[:i]
	if knownModules[module] {
		return "module '" + module + "' has no attribute '" + method[i+1:] + "'"
	}
	parts := strings.Split(module, ".")
	for n := 1; n <= len(parts); n++ {
		m := strings.Join(parts[:n], ".")
		if !knownModules[m] {
			return "No module named '" + m + "'"
		}
	}
	return "No module named '" + module + "'"
}

func (rc *reqCtx) methodLoggedUser() *apiError { return rc.respond("message", rc.user.Email) }

// methodGetList is frappe.client.get_list ({"message": [...]}); the
// "limit" alias is not a parameter here and is ignored.
func (rc *reqCtx) methodGetList() *apiError {
	a := listArgs{asDict: true}
	v, _ := rc.arg("doctype")
	a.doctype = cstr(v)
	a.fields, _ = rc.arg("fields")
	if v, ok := rc.arg("limit_page_length"); ok {
		a.limitPageLength = v
	}
	if v, ok := rc.arg("as_dict"); ok {
		a.asDict = sbool(v)
	}
	rc.commonListArgs(&a)
	rows, err := rc.getList(a)
	if err != nil {
		return err
	}
	return rc.respond("message", rows)
}

// methodReportviewCount is frappe.desk.reportview.get_count: the
// permission-aware DatabaseQuery count (User Permissions apply). Only
// distinct=true (the string) counts distinct names.
func (rc *reqCtx) methodReportviewCount() *apiError {
	v, _ := rc.arg("doctype")
	a := listArgs{doctype: cstr(v), asDict: true}
	rc.commonListArgs(&a)
	a.orderBy = ""
	distinct := false
	if d, ok := rc.arg("distinct"); ok && cstr(d) == "true" {
		distinct = true
	}
	limit := int64(0)
	if l, ok := rc.arg("limit"); ok {
		limit = cint(l)
	}
	a.fields = []any{"name"}
	a.limitPageLength = "0"
	rows, err := rc.getList(a)
	if err != nil {
		return err
	}
	n := int64(len(rows))
	if distinct {
		seen := map[string]bool{}
		for _, r := range rows {
			name, _ := r.(*object).get("name")
			seen[collationKey(cstr(name))] = true
		}
		n = int64(len(seen))
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return rc.respond("message", n)
}

// methodClientCount is frappe.client.get_count -> frappe.db.count. In
// v15.55.1 it applies NO permission checks and no User Permissions.
// Filters that are not valid JSON are used as a document name.
func (rc *reqCtx) methodClientCount() *apiError {
	v, _ := rc.arg("doctype")
	doctype := cstr(v)
	meta := rc.s.reg.get(doctype)
	if meta == nil || rc.s.missing(doctype) {
		return pythonError("pymysql.err.ProgrammingError", "(1146, \"Table '_5e5eaa6fd3a2d1b0.tab"+doctype+"' doesn't exist\")")
	}
	q := &query{ds: rc.s.dataset(), today: rc.s.today, main: meta, accentSensitiveLike: rc.s.opts.AccentSensitiveLike}
	q.items = []boundItem{{key: "name", expr: bCol{field: "name", typ: "Data"}}}
	raw, _ := rc.arg("filters")
	filters := raw
	if s, ok := raw.(string); ok {
		if decoded, err := jsonLoads(s); err == nil {
			filters = decoded
		}
	}
	switch f := filters.(type) {
	case string:
		if f != "" {
			name := f
			q.where = append(q.where, func(r jrow) bool { return collateCompare(r[0].Name, name) == 0 })
		}
	case *object, []any:
		conds, err := normaliseFilters(doctype, f)
		if err != nil {
			return err
		}
		for _, c := range conds {
			if nonWord.MatchString(c.field) {
				return validationError("Invalid filter: " + c.field)
			}
			p, err := q.compileQBFilter(c)
			if err != nil {
				return err
			}
			q.where = append(q.where, p)
		}
	}
	return rc.respond("message", int64(len(q.rows())))
}

// compileQBFilter applies frappe.qb operator semantics: no ifnull
// wrapping, and "is set" / "is not set" mean IS NOT NULL / IS NULL.
func (q *query) compileQBFilter(c filterCond) (func(jrow) bool, *apiError) {
	if c.op == "is" {
		ti, err := q.ensureJoin(c.doctype)
		if err != nil {
			return nil, err
		}
		col := bCol{ti: ti, field: c.field}
		set := strings.EqualFold(cstr(c.value), "set")
		return func(r jrow) bool { return (colValue(col, r) != nil) == set }, nil
	}
	return q.compileFilter(c, true)
}

// methodClientGet is frappe.client.get: the document as a dict with NULL
// fields included, under "message".
func (rc *reqCtx) methodClientGet() *apiError {
	dt, _ := rc.arg("doctype")
	name, _ := rc.arg("name")
	d, err := rc.loadDoc(cstr(dt), cstr(name))
	if err != nil {
		if err.excType == "PermissionError" {
			err.errorMsg = "You need the 'read' permission on <strong>" + cstr(dt) + "</strong> " + cstr(name) + " to perform this action."
		}
		return err
	}
	return rc.respond("message", docAsDict(rc.s.reg, d, false))
}

// methodLogin is POST /api/method/login (usr, pwd): sets the sid cookie.
func (rc *reqCtx) methodLogin() *apiError {
	usr, _ := rc.arg("usr")
	pwd, _ := rc.arg("pwd")
	fail := func(msg string) *apiError {
		e := bareError("AuthenticationError")
		e.lead = newObject(1)
		e.lead.set("message", msg)
		return e
	}
	if cstr(usr) == "" || cstr(pwd) == "" {
		return fail("Incomplete login details")
	}
	u := rc.s.userByEmail(cstr(usr))
	if u == nil || u.Password != cstr(pwd) {
		return fail("Invalid login credentials")
	}
	sid := rc.s.sessions.create(u.Email)
	exp := time.Now().Add(72 * time.Hour)
	http.SetCookie(rc.w, &http.Cookie{Name: "sid", Value: sid, Path: "/", Expires: exp, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	for _, c := range [][2]string{{"system_user", "yes"}, {"full_name", u.FullName}, {"user_id", u.Email}, {"user_image", ""}} {
		http.SetCookie(rc.w, &http.Cookie{Name: c[0], Value: c[1], Path: "/"})
	}
	o := newObject(3)
	o.set("message", "Logged In")
	o.set("home_page", "/app")
	o.set("full_name", u.FullName)
	writeJSONResponse(rc.w, http.StatusOK, o)
	return nil
}

// methodLogout ends the cookie session.
func (rc *reqCtx) methodLogout() *apiError {
	if c, err := rc.r.Cookie("sid"); err == nil {
		rc.s.sessions.drop(c.Value)
	}
	http.SetCookie(rc.w, &http.Cookie{Name: "sid", Value: "Guest", Path: "/"})
	writeJSONResponse(rc.w, http.StatusOK, newObject(0))
	return nil
}
