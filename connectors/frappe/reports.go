package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// Reports run through frappe.desk.query_report.run, as the desk does, so
// Frappe applies the report's roles and the user's permissions. Only the
// reports below may be run, and each tool builds its filters from its own
// typed arguments: no report name or filter passes through from a caller.

const (
	reportGeneralLedger      = "General Ledger"
	reportTrialBalance       = "Trial Balance"
	reportProfitAndLoss      = "Profit and Loss Statement"
	reportReceivable         = "Accounts Receivable"
	reportReceivableSummary  = "Accounts Receivable Summary"
	reportPayable            = "Accounts Payable"
	reportPayableSummary     = "Accounts Payable Summary"
	reportStockBalance       = "Stock Balance"
	reportStockLedger        = "Stock Ledger"
	reportBankReconciliation = "Bank Reconciliation Statement"
)

// reportAllowlist holds the reports erpgate runs. Each is run with
// ignore_prepared_report: Stock Balance is a prepared report out of the box,
// and Frappe makes any report one after a run takes over 15 seconds
// (enable_prepared_report), as a large site's General Ledger does; a
// prepared report is otherwise queued and answered with
// "prepared_report": true and no rows.
var reportAllowlist = map[string]bool{
	reportGeneralLedger:      true,
	reportTrialBalance:       true,
	reportProfitAndLoss:      true,
	reportReceivable:         true,
	reportReceivableSummary:  true,
	reportPayable:            true,
	reportPayableSummary:     true,
	reportStockBalance:       true,
	reportStockLedger:        true,
	reportBankReconciliation: true,
}

// reportColumn is one column of a report.
type reportColumn struct {
	Fieldname string `json:"fieldname"`
	Label     string `json:"label"`
	Fieldtype string `json:"fieldtype"`
	Options   string `json:"-"`
	Hidden    bool   `json:"-"`
}

// reportData is a report's parsed result.
type reportData struct {
	columns []reportColumn
	// rows are the result's object rows in order; empty spacer rows ({})
	// are dropped.
	rows []map[string]any
	// messages are what the report said besides its rows (its message and
	// any _server_messages, such as a clamped date range).
	messages []string
	// visible caches visibleColumns.
	visible []reportColumn
}

// runReport runs an allowlisted report with filters.
func (c *client) runReport(ctx context.Context, name string, filters map[string]any) (*reportData, error) {
	if !reportAllowlist[name] {
		return nil, toolerr.New(toolerr.Internal, "report %q is not allowlisted", name)
	}
	f, err := json.Marshal(filters)
	if err != nil {
		return nil, fmt.Errorf("encode report filters: %w", err)
	}
	v := url.Values{}
	v.Set("report_name", name)
	v.Set("filters", string(f))
	v.Set("ignore_prepared_report", "1")
	body, err := c.getBody(ctx, "/api/method/frappe.desk.query_report.run", v)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", name, err)
	}
	return parseReport(name, body)
}

// reportEnvelope is what parseReport reads from query_report.run's answer:
// {"message": {"result": [...], "columns": [...], "message": ...,
// "prepared_report": ...}, "_server_messages": "..."}, keys in any order.
type reportEnvelope struct {
	sawMessage     bool
	prepared       bool
	columns        []json.RawMessage // nil when absent or null
	result         []any             // each row as decoded: an object or a list of cells
	resultNull     bool              // result was absent or null
	message        any
	serverMessages string
}

// parseReport reads a query report's answer value by value, so that apart
// from the body only the decoded rows are held: a large report is never
// buffered a second time as raw JSON (the whole message, then each row).
func parseReport(name string, body []byte) (*reportData, error) {
	dec, err := outbound.NewJSONDecoder(body)
	if err != nil {
		return nil, err
	}
	var env reportEnvelope
	if err := env.read(dec); err != nil {
		return nil, outbound.InvalidJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		// More after the envelope (an error page, a second value): the
		// answer was not read whole, and its rows may not be all.
		return nil, invalidResponse("the ERP's answer for the report %s goes on after its JSON, so it was not read whole", name)
	}
	if !env.sawMessage {
		return nil, invalidResponse("the report %s returned no message", name)
	}
	if env.prepared {
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "the ERP queued %s as a background (prepared) report instead of running it; nothing was returned, which does not mean there are no rows. Retry later or ask an administrator to allow it to run directly", name)
	}
	if env.columns == nil {
		return nil, invalidResponse("the report %s returned no columns", name)
	}
	out := &reportData{}
	if env.resultNull {
		// A report that found nothing to report (e.g. a company without
		// accounts) answers with result null.
		out.messages = append(out.messages, "The ERP ran "+name+" and it returned no result rows.")
	}
	for _, raw := range env.columns {
		col, err := parseColumn(raw)
		if err != nil {
			return nil, invalidResponse("the report %s returned a column erpgate cannot read", name)
		}
		out.columns = append(out.columns, col)
	}
	if keyedListRows(env.result, out.columns) > maxKeyedPerAnswerByte*len(body)+(1<<20) {
		return nil, invalidResponse("the report %s returned rows of cells that, named by their columns, would be far larger than its answer; erpgate does not read them", name)
	}
	for i, r := range env.result {
		switch r := r.(type) {
		case map[string]any:
			if !blankRow(r) {
				out.rows = append(out.rows, withoutNoise(r))
			}
		case []any:
			// Frappe appends the total row of add_total_row reports as a
			// list of cells computed in floating point. erpgate computes
			// its own exact totals instead, so only a list row elsewhere
			// (a report returning list rows) is kept, keyed by column.
			if i == len(env.result)-1 {
				continue
			}
			row := map[string]any{}
			for j, col := range out.columns {
				if j < len(r) {
					row[col.Fieldname] = r[j]
				}
			}
			out.rows = append(out.rows, withoutNoise(row))
		}
		env.result[i] = nil // the row is in out.rows now, or dropped
	}
	if s, ok := env.message.(string); ok && strings.TrimSpace(s) != "" {
		out.messages = append(out.messages, cleanText(s))
	}
	if m := (frappeError{ServerMessages: env.serverMessages}).userMessage(); m != "" {
		out.messages = append(out.messages, m)
	}
	return out, nil
}

// maxKeyedPerAnswerByte bounds the rows of cells a report answers with
// once each cell is named by its column, per byte of the answer: the
// names come once in the answer, but once per cell in the rows kept and
// in the result, so long names and many short cells would make
// gigabytes of a few megabytes.
const maxKeyedPerAnswerByte = 8

// keyedListRows is about the size of the list rows of result once keyed
// by column (the total row too), counted without keying them.
func keyedListRows(result []any, columns []reportColumn) int {
	var named []int // named[k]: the first k columns' names and their cells
	n := 0
	for _, r := range result {
		cells, ok := r.([]any)
		if !ok {
			continue
		}
		if named == nil {
			named = make([]int, len(columns)+1)
			for j, c := range columns {
				named[j+1] = named[j] + len(c.Fieldname) + 16
			}
		}
		n += named[min(len(cells), len(columns))]
	}
	return n
}

// read decodes the answer's top-level object.
func (env *reportEnvelope) read(dec *json.Decoder) error {
	return readObject(dec, func(key string) error {
		switch key {
		case "message":
			env.sawMessage = true
			return env.readMessage(dec)
		case "_server_messages":
			return dec.Decode(&env.serverMessages)
		}
		return skipValue(dec)
	})
}

// readMessage decodes the report's message: null (no columns, so an
// invalid answer) or an object.
func (env *reportEnvelope) readMessage(dec *json.Decoder) error {
	env.resultNull = true
	if open, err := openValue(dec, '{'); err != nil || !open {
		return err
	}
	return readFields(dec, func(key string) error {
		switch key {
		case "result":
			return env.readResult(dec)
		case "columns":
			env.columns = nil
			return dec.Decode(&env.columns)
		case "message":
			return dec.Decode(&env.message)
		case "prepared_report":
			return dec.Decode(&env.prepared)
		}
		return skipValue(dec)
	})
}

// readResult decodes the rows (null or a list) one by one.
func (env *reportEnvelope) readResult(dec *json.Decoder) error {
	env.result, env.resultNull = nil, true
	if open, err := openValue(dec, '['); err != nil || !open {
		return err
	}
	env.resultNull = false
	env.result = []any{}
	for dec.More() {
		var row any
		if err := dec.Decode(&row); err != nil {
			return err
		}
		env.result = append(env.result, row)
	}
	return expectDelim(dec, ']')
}

// readObject reads an object, calling field for each key with the decoder
// positioned at its value (which field must consume).
func readObject(dec *json.Decoder, field func(key string) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	return readFields(dec, field)
}

// readFields reads an object's fields after its opening brace, and the
// closing brace.
func readFields(dec *json.Decoder, field func(key string) error) error {
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("object key %v is not a string", t)
		}
		if err := field(key); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return expectDelim(dec, '}')
}

// openValue reads the next value's first token: false for null, true for
// the opening delimiter want; anything else is an error.
func openValue(dec *json.Decoder, want json.Delim) (bool, error) {
	t, err := dec.Token()
	if err != nil {
		return false, err
	}
	if t == nil {
		return false, nil
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return false, fmt.Errorf("expected %v or null, found %v", want, t)
	}
	return true, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %v, found %v", want, t)
	}
	return nil
}

// skipValue consumes a value erpgate does not read.
func skipValue(dec *json.Decoder) error {
	var skip json.RawMessage
	return dec.Decode(&skip)
}

// withoutNoise removes float noise from every number of a row (see
// withoutFloatNoise), so every reader of report rows (the rows shown, the
// summary rows, erpgate's own sums) sees the same amounts.
func withoutNoise(row map[string]any) map[string]any {
	for k, v := range row {
		if n, ok := v.(json.Number); ok {
			row[k] = withoutFloatNoise(n)
		}
	}
	return row
}

// blankRow reports a spacer row: {} or only empty cells (the General
// Ledger separates groups with {"debit_in_transaction_currency": null, ...}).
func blankRow(row map[string]any) bool {
	for _, v := range row {
		if v != nil && v != "" {
			return false
		}
	}
	return true
}

// parseColumn reads a column given as an object or as Frappe's string form
// "Label:Fieldtype/Options:Width".
func parseColumn(raw json.RawMessage) (reportColumn, error) {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		parts := strings.Split(s, ":")
		col := reportColumn{Label: parts[0], Fieldtype: "Data"}
		if len(parts) > 1 && parts[1] != "" {
			typ, opts, _ := strings.Cut(parts[1], "/")
			col.Fieldtype, col.Options = typ, opts
		}
		col.Fieldname = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(col.Label)), " ", "_")
		return col, nil
	}
	// Decoded without a json.Decoder of its own: a report may have
	// hundreds of thousands of columns, and a decoder costs a kilobyte.
	var o struct {
		Fieldname string          `json:"fieldname"`
		Label     string          `json:"label"`
		Fieldtype string          `json:"fieldtype"`
		Options   json.RawMessage `json:"options"`
		Hidden    json.RawMessage `json:"hidden"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return reportColumn{}, outbound.InvalidJSON(err)
	}
	col := reportColumn{Fieldname: o.Fieldname, Label: o.Label, Fieldtype: o.Fieldtype, Options: str(rawScalar(o.Options)), Hidden: isTrue(rawScalar(o.Hidden)) || string(o.Hidden) == "true"}
	if col.Fieldname == "" {
		col.Fieldname = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(col.Label)), " ", "_")
	}
	if col.Fieldtype == "" {
		col.Fieldtype = "Data"
	}
	return col, nil
}

// rawScalar is a JSON string or number as a decoder with UseNumber gives
// it (a string, a json.Number), and nil for anything else.
func rawScalar(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return nil
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return json.Number(raw)
	}
	return nil
}

// visibleColumns returns the columns a person sees in the report.
// The slice is shared: callers do not change it.
func (d *reportData) visibleColumns() []reportColumn {
	if d.visible != nil || len(d.columns) == 0 {
		return d.visible
	}
	n := 0
	for _, c := range d.columns {
		if !c.Hidden {
			n++
		}
	}
	if n == len(d.columns) {
		d.visible = d.columns
		return d.visible
	}
	d.visible = make([]reportColumn, 0, n)
	for _, c := range d.columns {
		if !c.Hidden {
			d.visible = append(d.visible, c)
		}
	}
	return d.visible
}

// project keeps only the visible columns of a row (visible: their
// names), amounts as exact numbers and the quotes of label rows removed.
// It goes through the row's cells, not the columns: a report may have
// thousands of columns, most of them empty in a row.
func project(row map[string]any, visible map[string]bool, extra ...string) map[string]any {
	out := map[string]any{}
	for k, v := range row {
		if visible[k] {
			out[k] = cleanCell(v)
		}
	}
	for _, k := range extra {
		if v, ok := row[k]; ok {
			out[k] = cleanCell(v)
		}
	}
	return out
}

// cleanCell renders numbers as plain decimals and strips the quotes
// ERPNext puts around label cells ("'Opening'").
func cleanCell(v any) any {
	switch x := v.(type) {
	case json.Number:
		return canonicalNumber(x)
	case string:
		if l, ok := quotedLabel(x); ok {
			return l
		}
	}
	return v
}

// quotedLabel reports whether s is one of ERPNext's quoted label cells
// ('Opening', 'Total', 'Closing (Opening + Total)') and returns the label.
func quotedLabel(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// rowLabel returns the quoted label of a row's field, or "".
func rowLabel(row map[string]any, field string) string {
	l, _ := quotedLabel(str(row[field]))
	return l
}

// sumColumns adds up the given columns over rows exactly. Cells that are
// not numbers are reported, never silently skipped.
func sumColumns(rows []map[string]any, fields []string) (map[string]json.Number, error) {
	sums := map[string]*decimalSum{}
	for _, f := range fields {
		sums[f] = &decimalSum{}
	}
	for _, r := range rows {
		for _, f := range fields {
			if !sums[f].add(r[f]) {
				return nil, invalidResponse("the report cell %s is not a number", f)
			}
		}
	}
	out := map[string]json.Number{}
	for _, f := range fields {
		out[f] = sums[f].number()
	}
	return out, nil
}

// presentColumns returns the fields of want that the report has.
func (d *reportData) presentColumns(want ...string) []string {
	var out []string
	for _, w := range want {
		if slices.ContainsFunc(d.columns, func(c reportColumn) bool { return c.Fieldname == w }) {
			out = append(out, w)
		}
	}
	return out
}

// Row paging. Each call reruns the report; paging bounds the answer, not
// the ERP's work.

const (
	defaultReportLimit = 100
	maxReportLimit     = 500
)

// reportPageArgs are the paging arguments of row-based reports.
type reportPageArgs struct {
	Offset *int `json:"offset"`
	Limit  *int `json:"limit"`
}

func reportPageProps() []schema.Property {
	return []schema.Property{
		schema.Prop("offset", schema.Integer("Report rows to skip. Repeat the same request with next_offset for the next rows; each call reruns the report.").Min(0).Max(1_000_000).WithDefault(0)),
		schema.Prop("limit", schema.Integer("Report rows per call.").Min(1).Max(maxReportLimit).WithDefault(defaultReportLimit)),
	}
}

// reportPage is the paging part of a row-based report's result.
type reportPage struct {
	RowCount   int  `json:"row_count"`
	Offset     int  `json:"offset"`
	Returned   int  `json:"returned"`
	NextOffset *int `json:"next_offset"`
	Complete   bool `json:"complete"`
}

// reportPageOutputProps describe reportPage in a result schema.
func reportPageOutputProps() []schema.Property {
	return []schema.Property{
		schema.Prop("row_count", schema.Integer("Rows the report returned in all, across every page.")).Required(),
		schema.Prop("offset", schema.Integer("First row of this page.")).Required(),
		schema.Prop("returned", schema.Integer("Rows in this page.")).Required(),
		schema.Prop("next_offset", schema.Integer("offset of the next page; null when this page reaches the last row.").Nullable()).Required(),
		schema.Prop("complete", schema.Boolean("True when no rows follow this page.")).Required(),
	}
}

// pageReportRows returns one page of rows and the paging facts, adding a
// warning when rows follow.
func pageReportRows(rows []map[string]any, a reportPageArgs, maxRecords int, warnings *[]string) ([]map[string]any, reportPage) {
	offset := 0
	if a.Offset != nil {
		offset = *a.Offset
	}
	limit := defaultReportLimit
	if a.Limit != nil {
		limit = *a.Limit
	}
	limit = min(limit, maxReportLimit, max(maxRecords, 1))
	start := min(offset, len(rows))
	end := min(start+limit, len(rows))
	p := reportPage{RowCount: len(rows), Offset: offset, Returned: end - start, Complete: end >= len(rows)}
	if !p.Complete {
		next := end
		p.NextOffset = &next
		*warnings = append(*warnings, fmt.Sprintf("This page holds rows %d to %d of %d; call again with offset %d for the rest.", start+1, end, len(rows), end))
	}
	return rows[start:end], p
}

// columnsSchema describes a report's visible columns.
func columnsSchema() *schema.Schema {
	return schema.Array(schema.Object(
		schema.Prop("fieldname", schema.String("Key of this column in rows.")).Required(),
		schema.Prop("label", schema.String("Column heading as the ERP shows it.")).Required(),
		schema.Prop("fieldtype", schema.String("Currency, Float, Int, Date, Link, Data, ...")).Required(),
	), "The report's visible columns, in order.")
}

// reportResult is the common part of every report tool's result.
type reportResult struct {
	Report     string           `json:"report"`
	Company    string           `json:"company"`
	Currency   string           `json:"currency,omitempty"`
	DateRange  *dateRange       `json:"date_range,omitempty"`
	ReportDate string           `json:"report_date,omitempty"`
	Columns    []reportColumn   `json:"columns"`
	Rows       []map[string]any `json:"rows"`
	reportPage
	Warnings []string `json:"warnings"`
}

// newReportResult starts a result with its columns and an empty warning
// list (never null: "no warnings" is stated, not implied).
func newReportResult(name string, company companyInfo, d *reportData) reportResult {
	r := reportResult{Report: name, Company: company.Name, Currency: company.Currency, Warnings: []string{}}
	r.Columns = d.visibleColumns()
	if r.Columns == nil {
		r.Columns = []reportColumn{}
	}
	r.Warnings = append(r.Warnings, d.messages...)
	return r
}

// setRows pages rows into the result, projecting each to the visible
// columns plus extra keys.
func (r *reportResult) setRows(d *reportData, rows []map[string]any, a reportPageArgs, maxRecords int, extra ...string) {
	page, p := pageReportRows(rows, a, maxRecords, &r.Warnings)
	r.reportPage = p
	r.Rows = make([]map[string]any, len(page))
	if len(page) == 0 {
		return
	}
	visible := map[string]bool{}
	for _, c := range d.visibleColumns() {
		visible[c.Fieldname] = true
	}
	for i, row := range page {
		r.Rows[i] = project(row, visible, extra...)
	}
}

// reportOutput is a report tool's output schema: the common part, the row
// schema, and props specific to the tool.
func reportOutput(row *schema.Schema, extra ...schema.Property) *schema.Schema {
	props := []schema.Property{
		schema.Prop("report", schema.String("The ERP report that was run.")).Required(),
		schema.Prop("company", schema.String("Company the report covers.")).Required(),
		schema.Prop("currency", schema.String("Company currency of the amounts, unless a row says otherwise.")),
		schema.Prop("date_range", withDesc(dateRangeSchema(), "The date range the report covers, with any period resolved.")),
		schema.Prop("report_date", schema.String("The date balances are stated at.")),
		schema.Prop("columns", columnsSchema()).Required(),
		schema.Prop("rows", schema.Array(row, "The rows of this page, keyed by column fieldname; amounts are exact numbers.")).Required(),
		warningsProp().Required(),
	}
	props = append(props, reportPageOutputProps()...)
	props = append(props, extra...)
	return schema.Object(props...)
}

// listFilter turns an optional exact value into the one-element list a
// MultiSelectList report filter expects, or nil.
func listFilter(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// setIf adds a filter value when it is not empty.
func setIf(f map[string]any, key string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case []string:
		if len(x) == 0 {
			return
		}
	}
	f[key] = v
}
