package frappetest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestGeneralLedgerShapeAndTotals(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	from, to := "2025-04-01", "2025-06-30"
	r := mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": from, "to_date": to})
	wantCols := []string{"gl_entry", "posting_date", "account", "debit", "credit", "balance", "voucher_type", "voucher_subtype",
		"voucher_no", "against", "party_type", "party", "against_voucher_type", "against_voucher", "bill_no"}
	if got := fieldnames(r.columns); !equalStrings(got, wantCols) {
		t.Fatalf("columns %v", got)
	}
	if r.columns[3]["label"] != "Debit (NZD)" || r.columns[0]["hidden"] != json1 {
		t.Fatalf("column labels: %v %v", r.columns[3], r.columns[0])
	}
	if r.msg["add_total_row"] != json0 || r.msg["skip_total_row"] != json0 || r.msg["chart"] != nil || r.tail != nil {
		t.Fatalf("envelope %v", r.msg)
	}
	rows := r.rows
	first, total, closing := rows[0], rows[len(rows)-2], rows[len(rows)-1]
	if first["account"] != "'Opening'" || total["account"] != "'Total'" || closing["account"] != "'Closing (Opening + Total)'" {
		t.Fatalf("label rows %v / %v / %v", first["account"], total["account"], closing["account"])
	}
	if first["debit_in_transaction_currency"] != nil || first["presentation_currency"] != "NZD" || first["account_currency"] != nil {
		t.Fatalf("opening row %v", first)
	}
	// Expected from the GL Entry documents: the period's entries (opening
	// entries go to the Opening row, which nets to zero here).
	var want []*Doc
	var dr, cr, openNet int64
	for _, e := range liveGL(ds, nzCompany) {
		switch {
		case e.Str("is_opening") == "Yes":
			openNet += e.Dec("debit").Cents() - e.Dec("credit").Cents()
		case e.Str("posting_date") >= from && e.Str("posting_date") <= to:
			want = append(want, e)
			dr += e.Dec("debit").Cents()
			cr += e.Dec("credit").Cents()
		}
	}
	entries := rows[1 : len(rows)-2]
	if len(entries) != len(want) || len(want) < 100 {
		t.Fatalf("%d entry rows, documents have %d", len(entries), len(want))
	}
	if cents(t, total["debit"]) != dr || cents(t, total["credit"]) != cr || dr != cr {
		t.Errorf("total %v/%v, documents %d/%d", total["debit"], total["credit"], dr, cr)
	}
	if cents(t, first["debit"])-cents(t, first["credit"]) != openNet || openNet != 0 {
		t.Errorf("opening %v/%v, opening entries net %d", first["debit"], first["credit"], openNet)
	}
	if cents(t, closing["balance"]) != cents(t, first["balance"])+dr-cr {
		t.Errorf("closing balance %v", closing["balance"])
	}
	// Without categorize_by the entries come grouped by voucher (in date
	// order), with a running balance continuing from the opening row.
	balance := cents(t, first["balance"])
	seen := map[any]bool{}
	for i, e := range entries {
		balance += cents(t, e["debit"]) - cents(t, e["credit"])
		if cents(t, e["balance"]) != balance {
			t.Fatalf("row %d balance %v, want %d", i, e["balance"], balance)
		}
		if i > 0 {
			p := entries[i-1]
			if p["posting_date"].(string) > e["posting_date"].(string) {
				t.Fatalf("rows %d-%d out of date order", i-1, i)
			}
			if p["voucher_no"] != e["voucher_no"] && seen[e["voucher_no"]] {
				t.Fatalf("voucher %v is split", e["voucher_no"])
			}
		}
		seen[e["voucher_no"]] = true
		if e["voucher_type"] == "Purchase Invoice" && e["against_voucher"] != nil {
			if e["bill_no"] != ds.Get("Purchase Invoice", e["against_voucher"].(string)).Str("bill_no") {
				t.Fatalf("bill_no %v for %v", e["bill_no"], e["against_voucher"])
			}
		}
	}
}

var (
	json0 = jsonNumber("0")
	json1 = jsonNumber("1")
)

func TestGeneralLedgerAccountFilterHasOpeningBalance(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	acct := "Debtors - DHNZ"
	from, to := "2026-01-01", "2026-03-31"
	r := mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": from, "to_date": to, "account": []string{acct}})
	var before, during int64
	n := 0
	for _, e := range liveGL(ds, nzCompany) {
		if e.Str("account") != acct {
			continue
		}
		net := e.Dec("debit").Cents() - e.Dec("credit").Cents()
		switch d := e.Str("posting_date"); {
		case d < from:
			before += net
		case d <= to:
			during += net
			n++
		}
	}
	rows := r.rows
	if got := cents(t, rows[0]["balance"]); got != before || before <= 0 {
		t.Fatalf("opening balance %d, documents %d", got, before)
	}
	if len(rows) != n+3 {
		t.Fatalf("%d rows, want %d entries", len(rows)-3, n)
	}
	if got := cents(t, rows[len(rows)-1]["balance"]); got != before+during {
		t.Fatalf("closing %d, want %d", got, before+during)
	}
	if rows[0]["account_currency"] != "NZD" {
		t.Fatalf("account_currency %v", rows[0]["account_currency"])
	}
	// A USD receivable account is presented in its own currency.
	r = mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": from, "to_date": to, "account": []string{"Debtors USD - DHNZ"}})
	var usd int64
	for _, e := range liveGL(ds, nzCompany) {
		if e.Str("account") == "Debtors USD - DHNZ" && e.Str("posting_date") <= to {
			usd += e.Dec("debit_in_account_currency").Cents() - e.Dec("credit_in_account_currency").Cents()
		}
	}
	if r.columns[3]["label"] != "Debit (USD)" || cents(t, r.rows[len(r.rows)-1]["balance"]) != usd {
		t.Fatalf("USD account: %v, closing %v want %d", r.columns[3]["label"], r.rows[len(r.rows)-1]["balance"], usd)
	}
}

func TestGeneralLedgerCategorizeAndDimensions(t *testing.T) {
	s := testServer(t)
	base := map[string]any{"company": auCompany, "from_date": "2025-07-01", "to_date": "2025-07-31"}
	plain := mustReport(t, s, "General Ledger", base)
	f := copyMap(base)
	f["categorize_by"] = "Categorize by Voucher (Consolidated)"
	f["include_dimensions"] = 1
	cons := mustReport(t, s, "General Ledger", f)
	cols := fieldnames(cons.columns)
	if cols[12] != "project" || cols[13] != "cost_center" {
		t.Fatalf("dimension columns %v", cols)
	}
	keys := map[string]bool{}
	for _, e := range plain.rows[1 : len(plain.rows)-2] {
		keys[cstr(e["posting_date"])+cstr(e["voucher_no"])+cstr(e["account"])+cstr(e["party"])+cstr(e["cost_center"])+cstr(e["project"])] = true
	}
	if len(cons.rows)-3 != len(keys) || len(keys) >= len(plain.rows)-3 {
		t.Fatalf("consolidated %d rows, %d distinct keys, %d entries", len(cons.rows)-3, len(keys), len(plain.rows)-3)
	}
	if cents(t, cons.rows[len(cons.rows)-2]["debit"]) != cents(t, plain.rows[len(plain.rows)-2]["debit"]) {
		t.Fatal("consolidation changed the total")
	}
	// Categorize by Account: per-account blocks separated by spacer rows.
	f = copyMap(base)
	f["categorize_by"] = "Categorize by Account"
	acc := mustReport(t, s, "General Ledger", f)
	spacers := 0
	for _, row := range acc.rows {
		if _, ok := row["posting_date"]; !ok && row["account"] == nil {
			spacers++
		}
	}
	if spacers < 3 {
		t.Fatalf("want spacer rows between account blocks, got %d", spacers)
	}
}

func copyMap(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestGeneralLedgerValidation(t *testing.T) {
	s := testServer(t)
	u := s.User("all-companies")
	cases := []struct {
		filters map[string]any
		status  int
		exc     string
		msg     string
	}{
		{map[string]any{"from_date": "2025-01-01", "to_date": "2025-01-31"}, 417, "ValidationError", "Company is mandatory"},
		{map[string]any{"company": nzCompany}, 417, "ValidationError", "<strong>From Date</strong> and <strong>To Date</strong> are mandatory"},
		{map[string]any{"company": nzCompany, "from_date": "2025-02-01", "to_date": "2025-01-01"}, 417, "ValidationError", "From Date must be before To Date"},
		{map[string]any{"company": nzCompany, "from_date": "2025-02-01"}, 500, "TypeError", "'>' not supported between instances of 'str' and 'NoneType'"},
		{map[string]any{"company": nzCompany, "from_date": "2025-01-01", "to_date": "2025-01-31", "account": []string{"Nope - DHNZ"}}, 417, "ValidationError", "Account Nope - DHNZ does not exists"},
		{map[string]any{"company": nzCompany, "from_date": "2025-01-01", "to_date": "2025-01-31", "party_type": "Customer", "party": []string{"Nobody Ltd"}}, 417, "ValidationError", "Invalid Customer: Nobody Ltd"},
	}
	for _, c := range cases {
		r := runReport(t, s, u, "General Ledger", c.filters, nil)
		expectError(t, r.resp, c.status, c.exc, c.msg)
	}
	// No filters at all: empty columns and rows.
	r := runReport(t, s, u, "General Ledger", nil, nil)
	r.expectStatus(t, 200)
	if len(r.rows) != 0 || len(r.columns) != 0 || r.msg["result"] == nil {
		t.Fatalf("empty filters: %s", r.raw)
	}
}

func TestGeneralLedgerCancelledEntries(t *testing.T) {
	s := testServer(t)
	f := map[string]any{"company": nzCompany, "from_date": "2025-01-01", "to_date": "2026-06-15", "voucher_no": ""}
	var cancelled string
	for _, d := range s.Data().List("Sales Invoice") {
		if d.Int("docstatus") == 2 && d.Str("company") == nzCompany {
			cancelled = d.Name
			break
		}
	}
	f["voucher_no"] = cancelled
	r := mustReport(t, s, "General Ledger", f)
	if len(r.rows) != 3 {
		t.Fatalf("cancelled voucher shows %d entries", len(r.rows)-3)
	}
	f["show_cancelled_entries"] = 1
	r = mustReport(t, s, "General Ledger", f)
	if n := len(r.rows) - 3; n < 4 || n%2 != 0 || cents(t, r.rows[len(r.rows)-1]["balance"]) != 0 {
		t.Fatalf("cancelled entries with reversals: %d rows, closing %v", n, r.rows[len(r.rows)-1]["balance"])
	}
}

// sortedKeys returns a map's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ERPNext adds GL amounts as Python floats (update_value_in_dict,
// get_balance), so balances and total rows carry binary noise. The expected
// texts are what Python prints for these seeded GL Entries, read as floats
// and added in the report's order; the opening row's netted-away side is
// the int 0.
func TestGeneralLedgerAddsUpLikePythonFloats(t *testing.T) {
	s := testServer(t)
	r := mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": "2025-07-01", "to_date": "2025-07-31",
		"account": []string{"Administrative Expenses - DHNZ"}, "categorize_by": "Categorize by Voucher (Consolidated)", "include_dimensions": 1})
	want := [][3]string{ // debit, credit, balance
		{"37051.71000000001", "0", "37051.71000000001"},
		{"628.25", "0.0", "37679.96000000001"},
		{"2561.62", "0.0", "40241.58000000001"},
		{"69.3", "0.0", "40310.88000000001"},
		{"475.2", "0.0", "40786.08000000001"},
		{"3734.37", "0.0", "3734.37"},
		{"40786.08000000001", "0.0", "40786.08000000001"},
	}
	if len(r.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(r.rows), len(want))
	}
	for i, w := range want {
		row := r.rows[i]
		if got := [3]string{fmt.Sprint(row["debit"]), fmt.Sprint(row["credit"]), fmt.Sprint(row["balance"])}; got != w {
			t.Errorf("row %d (%v): debit, credit, balance %v, Python %v", i, row["account"], got, w)
		}
	}
	// Noise also comes from cancelling amounts: a payable account whose
	// balance swings around zero.
	r = mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": "2025-04-01", "to_date": "2025-06-30",
		"account": []string{"Creditors - DHNZ"}, "categorize_by": "Categorize by Voucher (Consolidated)", "include_dimensions": 1})
	total, closing := r.rows[len(r.rows)-2], r.rows[len(r.rows)-1]
	if total["debit"] != jsonNumber("106018.02999999998") || total["balance"] != jsonNumber("884.1599999999889") || closing["balance"] != jsonNumber("-3170.4600000000064") {
		t.Errorf("total %v / %v, closing balance %v", total["debit"], total["balance"], closing["balance"])
	}
}

// exampleGerman are example translations of the labels ERPNext wraps in
// _(), for a site whose users read German (not quoted from ERPNext's
// de.po: only that they differ from English matters).
var exampleGerman = map[string]string{
	"Opening": "Eröffnung", "Total": "Summe", "Closing (Opening + Total)": "Schlussbestand (Eröffnung + Summe)",
	"Total {0} ({1})": "Gesamt {0} ({1})", "Income": "Ertrag", "Expense": "Aufwand", "Credit": "Haben", "Debit": "Soll",
	"Profit for the year": "Jahresergebnis", "'Opening'": "'Anfangsbestand'",
	"Bank Statement balance as per General Ledger": "Kontostand laut Hauptbuch",
	"Outstanding Cheques and Deposits to clear":    "Offene Schecks und Einzahlungen",
	"Cheques and Deposits incorrectly cleared":     "Falsch verrechnete Schecks und Einzahlungen",
	"Calculated Bank Statement balance":            "Errechneter Kontoauszugssaldo",
}

// TestReportLabelsAreTranslated: ERPNext builds the quoted label rows
// with _() ("'" + _("Opening") + "'", _("Total {0} ({1})").format(...)),
// so a user of another language gets them translated.
func TestReportLabelsAreTranslated(t *testing.T) {
	s := newServer(t, Options{Translations: exampleGerman})
	labels := func(r reportResp) []string {
		var out []string
		for _, row := range r.rows {
			if a, _ := row["account"].(string); strings.HasPrefix(a, "'") {
				out = append(out, a)
			}
		}
		return out
	}
	gl := mustReport(t, s, "General Ledger", map[string]any{"company": nzCompany, "from_date": "2025-03-01", "to_date": "2025-03-31"})
	if got, want := labels(gl), []string{"'Eröffnung'", "'Summe'", "'Schlussbestand (Eröffnung + Summe)'"}; !slices.Equal(got, want) {
		t.Errorf("General Ledger labels %v, want %v", got, want)
	}
	tb := mustReport(t, s, "Trial Balance", map[string]any{"company": nzCompany, "fiscal_year": "2025"})
	if got := labels(tb); !slices.Equal(got, []string{"'Summe'"}) {
		t.Errorf("Trial Balance labels %v", got)
	}
	pl := mustReport(t, s, "Profit and Loss Statement", map[string]any{"company": nzCompany, "filter_based_on": "Date Range",
		"period_start_date": "2025-01-01", "period_end_date": "2025-12-31", "periodicity": "Yearly"})
	if got, want := labels(pl), []string{"'Gesamt Ertrag (Haben)'", "'Gesamt Aufwand (Soll)'", "'Jahresergebnis'"}; !slices.Equal(got, want) {
		t.Errorf("P&L labels %v, want %v", got, want)
	}
	sl := mustReport(t, s, "Stock Ledger", map[string]any{"company": auCompany, "from_date": "2025-06-01", "to_date": "2025-06-30"})
	item, wh := cstr(sl.rows[0]["item_code"]), cstr(sl.rows[0]["warehouse"])
	sl = mustReport(t, s, "Stock Ledger", map[string]any{"company": auCompany, "from_date": "2025-06-01", "to_date": "2025-06-30", "item_code": []string{item}, "warehouse": []string{wh}})
	if got := sl.rows[0]["item_code"]; got != "'Anfangsbestand'" {
		t.Errorf("Stock Ledger opening row %v", sl.rows[0])
	}
	brs := mustReport(t, s, "Bank Reconciliation Statement", map[string]any{"company": auCompany, "account": "Westpac Business Account - DTAU", "report_date": "2026-06-15"})
	var summary []string
	for _, row := range brs.rows {
		if l, ok := row["payment_entry"].(string); ok && row["payment_document"] == nil {
			summary = append(summary, l)
		}
	}
	if want := []string{"Kontostand laut Hauptbuch", "Offene Schecks und Einzahlungen", "Falsch verrechnete Schecks und Einzahlungen", "Errechneter Kontoauszugssaldo"}; !slices.Equal(summary, want) {
		t.Errorf("Bank Reconciliation Statement summary %v, want %v", summary, want)
	}
}
