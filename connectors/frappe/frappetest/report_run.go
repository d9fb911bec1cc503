package frappetest

import (
	"slices"
	"time"
)

// /api/method/frappe.desk.query_report.run (frappe/desk/query_report.py
// run -> get_report_doc -> generate_report_result), for the standard
// ERPNext reports in reportSpecs.

// reportSpec is a standard Report document: its reference doctype, roles,
// flags and the Script Report's execute().
type reportSpec struct {
	name        string
	refDoctype  string
	roles       []string
	addTotalRow bool
	prepared    bool
	execute     func(rc *reportCtx) (*reportOutput, *apiError)
}

// reportOutput is what a Script Report's execute() returns: (columns,
// data, message, chart, report_summary, skip_total_row). A nil result is
// Python None.
type reportOutput struct {
	columns   []*object
	result    []any
	message   any
	chart     any
	summary   any
	skipTotal any // 0, 1 or P&L's net profit (the 6th element)
}

// reportCtx carries one report run.
type reportCtx struct {
	ds   *Dataset
	user *User
	f    *reportFilters
	// translations are the site's (Options.Translations).
	translations map[string]string
	// log collects msgprint messages (returned as _server_messages).
	log []*object
}

// tr is frappe._: the translation of an English source string, or the
// string itself.
func (rc *reportCtx) tr(s string) string {
	if t, ok := rc.translations[s]; ok {
		return t
	}
	return s
}

// msgprint is frappe.msgprint(msg) without raising.
func (rc *reportCtx) msgprint(msg string) { rc.log = append(rc.log, printMessage(msg)) }

var accountsReportRoles = []string{"Accounts User", "Accounts Manager", "Auditor"}

// reportSpecs are the reports the simulator runs, keyed by name.
var reportSpecs = map[string]*reportSpec{}

func init() {
	for _, r := range []*reportSpec{
		{name: "General Ledger", refDoctype: "GL Entry", roles: accountsReportRoles, execute: runGeneralLedger},
		{name: "Trial Balance", refDoctype: "GL Entry", roles: accountsReportRoles, execute: runTrialBalance},
		{name: "Profit and Loss Statement", refDoctype: "GL Entry", roles: accountsReportRoles, execute: runProfitAndLoss},
		{name: "Accounts Receivable", refDoctype: "Sales Invoice", roles: accountsReportRoles, addTotalRow: true, execute: runAccountsReceivable},
		{name: "Accounts Receivable Summary", refDoctype: "Sales Invoice", roles: accountsReportRoles, addTotalRow: true, execute: runAccountsReceivableSummary},
		{name: "Accounts Payable", refDoctype: "Purchase Invoice", roles: []string{"Accounts User", "Purchase User", "Accounts Manager", "Auditor"}, addTotalRow: true, execute: runAccountsPayable},
		{name: "Accounts Payable Summary", refDoctype: "Purchase Invoice", roles: []string{"Accounts User", "Purchase User", "Accounts Manager", "Auditor"}, addTotalRow: true, execute: runAccountsPayableSummary},
		{name: "Stock Balance", refDoctype: "Stock Ledger Entry", roles: []string{"Stock User", "Accounts Manager"}, addTotalRow: true, prepared: true, execute: runStockBalance},
		{name: "Stock Ledger", refDoctype: "Stock Ledger Entry", roles: []string{"Stock User", "Accounts Manager"}, execute: runStockLedger},
		{name: "Bank Reconciliation Statement", refDoctype: "Journal Entry", roles: []string{"Accounts User", "Accounts Manager"}, execute: runBankReconciliation},
	} {
		reportSpecs[r.name] = r
	}
}

// reportDoc is get_report_doc: the Report must exist (404), the user needs
// one of its roles and "report" permission on its reference doctype (403).
func reportDoc(user *User, name string) (*reportSpec, *apiError) {
	spec := reportSpecs[name]
	if spec == nil {
		return nil, notFound("Report " + name + " not found")
	}
	if user == nil || !user.hasRole(spec.roles) {
		return nil, frappeThrow("PermissionError", "You don't have access to Report: "+name, "")
	}
	if !canRead(user, spec.refDoctype) {
		return nil, frappeThrow("PermissionError", "You don't have permission to get a report on: "+spec.refDoctype, "")
	}
	return spec, nil
}

// methodQueryReportGetScript is frappe.desk.query_report.get_script, which
// the desk calls before it runs a report: get_report_doc's checks, then the
// report's script (an empty one here).
func (rc *reqCtx) methodQueryReportGetScript() *apiError {
	nameArg, ok := rc.arg("report_name")
	if !ok {
		return pythonError("TypeError", "get_script() missing 1 required positional argument: 'report_name'")
	}
	name := cstr(nameArg)
	if _, err := reportDoc(rc.user, name); err != nil {
		return err
	}
	o := newObject(5)
	o.set("script", "frappe.query_reports["+string(pyJSON(name))+"] = {};")
	o.set("html_format", nil)
	o.set("execution_time", 0)
	o.set("filters", []any{})
	o.set("custom_report_name", nil)
	return rc.respond("message", o)
}

// methodQueryReportRun is frappe.desk.query_report.run.
func (rc *reqCtx) methodQueryReportRun() *apiError {
	nameArg, ok := rc.arg("report_name")
	if !ok {
		return pythonError("TypeError", "run() missing 1 required positional argument: 'report_name'")
	}
	name := cstr(nameArg)
	raw, _ := rc.arg("filters")
	var filters any = raw
	if s, isStr := raw.(string); isStr && s != "" {
		v, err := jsonLoads(s)
		if err != nil {
			return err
		}
		filters = v
	}
	// validate_filters_permissions loads the Report first; the standard
	// script reports have no filter rows to check.
	if pyTruthy(filters) && reportSpecs[name] == nil {
		return notFound("Report " + name + " not found")
	}
	spec, err := reportDoc(rc.user, name)
	if err != nil {
		return err
	}
	ignore, _ := rc.arg("ignore_prepared_report")
	if (spec.prepared || slices.Contains(rc.s.opts.PreparedReports, name)) && !sbool(ignore) {
		// No completed Prepared Report exists for these filters: Frappe
		// answers with the (empty) prepared-report envelope, add_total_row
		// being the report's flag (0 when it is off).
		o := newObject(3)
		o.set("prepared_report", true)
		o.set("doc", nil)
		if spec.addTotalRow {
			o.set("add_total_row", true)
		} else {
			o.set("add_total_row", 0)
		}
		return rc.respond("message", o)
	}
	obj, _ := filters.(*object)
	if obj == nil {
		obj = newObject(0)
	}
	ctx := &reportCtx{ds: rc.s.dataset(), user: rc.user, f: &reportFilters{o: obj, today: rc.s.today}, translations: rc.s.opts.Translations}
	start := time.Now()
	out, err := spec.execute(ctx)
	if err != nil {
		return withLog(err, ctx.log)
	}
	elapsed := time.Since(start).Seconds()
	result := out.result
	if len(result) > 0 {
		result = filteredReportData(rc.user, out.columns, result)
	}
	skip := out.skipTotal
	if skip == nil {
		skip = int64(0)
	}
	if spec.addTotalRow && len(result) > 0 && !valueTruthy(skip) {
		result = append(result, totalRow(result, out.columns))
	}
	env := newObject(9)
	if result == nil {
		env.set("result", nil)
	} else {
		env.set("result", result)
	}
	env.set("columns", out.columns)
	env.set("message", out.message)
	env.set("chart", out.chart)
	env.set("report_summary", out.summary)
	env.set("skip_total_row", skip)
	env.set("status", nil)
	env.set("execution_time", elapsed)
	switch {
	case !spec.addTotalRow:
		env.set("add_total_row", int64(0))
	default:
		env.set("add_total_row", !valueTruthy(skip))
	}
	body := newObject(2)
	body.set("message", env)
	if len(ctx.log) > 0 {
		list := make([]any, len(ctx.log))
		for i, m := range ctx.log {
			list[i] = string(pyJSONSpaced(m))
		}
		body.set("_server_messages", string(pyJSONSpaced(list)))
	}
	writeJSONResponse(rc.w, 200, body)
	return nil
}

// withLog puts earlier msgprint messages before the error's own.
func withLog(err *apiError, log []*object) *apiError {
	if len(log) > 0 {
		err.messages = append(append([]*object{}, log...), err.messages...)
	}
	return err
}
