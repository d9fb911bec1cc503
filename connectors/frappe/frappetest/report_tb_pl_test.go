package frappetest

import (
	"strings"
	"testing"
)

func TestTrialBalanceFromLedger(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	r := mustReport(t, s, "Trial Balance", map[string]any{"company": nzCompany, "fiscal_year": "2026", "from_date": "2026-03-01", "to_date": "2026-05-31", "show_group_accounts": 1})
	if got := fieldnames(r.columns); strings.Join(got, ",") != "account,currency,opening_debit,opening_credit,debit,credit,closing_debit,closing_credit" {
		t.Fatalf("columns %v", got)
	}
	byAccount := map[string]map[string]any{}
	for _, row := range r.rows {
		byAccount[cstr(row["account"])] = row
	}
	total := r.rows[len(r.rows)-1]
	if total["account"] != "'Total'" || total["account_name"] != "'Total'" || total["warn_if_negative"] != true || total["parent_account"] != nil {
		t.Fatalf("total row %v", total)
	}
	if cents(t, total["debit"]) != cents(t, total["credit"]) {
		t.Fatalf("period does not balance: %v", total)
	}
	// Without a Period Closing Voucher the 2025 profit is missing from the
	// 2026 opening unless unclosed P&L balances are shown.
	closed := mustReport(t, s, "Trial Balance", map[string]any{"company": nzCompany, "fiscal_year": "2026", "from_date": "2026-03-01",
		"to_date": "2026-05-31", "show_group_accounts": 1, "show_unclosed_fy_pl_balances": 1})
	ct := closed.rows[len(closed.rows)-1]
	if cents(t, ct["opening_debit"]) != cents(t, ct["opening_credit"]) || cents(t, ct["closing_debit"]) != cents(t, ct["closing_credit"]) {
		t.Fatalf("opening does not balance with unclosed P&L: %v", ct)
	}
	if cents(t, total["opening_debit"]) == cents(t, total["opening_credit"]) {
		t.Fatalf("2025 profit should be missing from the opening: %v", total)
	}
	// Expected per account from the GL Entry documents.
	type sums struct{ od, oc, d, c int64 }
	want := map[string]*sums{}
	for _, e := range liveGL(ds, nzCompany) {
		a := e.Str("account")
		if want[a] == nil {
			want[a] = &sums{}
		}
		date, pl := e.Str("posting_date"), ds.Get("Account", a).Str("report_type") == "Profit and Loss"
		dr, cr := e.Dec("debit").Cents(), e.Dec("credit").Cents()
		if (date < "2026-03-01" || e.Str("is_opening") == "Yes") && (!pl || date >= "2026-01-01") {
			want[a].od += dr
			want[a].oc += cr
		}
		if e.Str("is_opening") == "No" && date >= "2026-03-01" && date <= "2026-05-31" {
			want[a].d += dr
			want[a].c += cr
		}
	}
	var periodDebit int64
	for a, w := range want {
		row := byAccount[a]
		if row == nil {
			if w.od+w.oc+w.d+w.c != 0 {
				t.Errorf("account %s missing", a)
			}
			continue
		}
		got := sums{cents(t, row["opening_debit"]), cents(t, row["opening_credit"]), cents(t, row["debit"]), cents(t, row["credit"])}
		if got != *w {
			t.Errorf("%s: report %v, documents %v", a, got, *w)
		}
		if cents(t, row["closing_debit"]) != w.od+w.d || cents(t, row["closing_credit"]) != w.oc+w.c {
			t.Errorf("%s closing", a)
		}
		periodDebit += w.d
	}
	if cents(t, total["debit"]) != periodDebit {
		t.Errorf("total debit %v, documents %d", total["debit"], periodDebit)
	}
	if byAccount["Sales - DHNZ"]["parent_account"] != "Direct Income - DHNZ" || cents(t, byAccount["Sales - DHNZ"]["indent"]) != 200 {
		t.Errorf("tree columns %v", byAccount["Sales - DHNZ"])
	}
	// Leaf view: no group accounts, indent 0.
	r = mustReport(t, s, "Trial Balance", map[string]any{"company": nzCompany, "fiscal_year": "2026"})
	for _, row := range r.rows[:len(r.rows)-1] {
		if row["is_group_account"] != json0 || row["indent"] != json0 {
			t.Fatalf("group row without show_group_accounts: %v", row)
		}
	}
}

func TestTrialBalanceClampsToFiscalYear(t *testing.T) {
	s := testServer(t)
	r := mustReport(t, s, "Trial Balance", map[string]any{"company": auCompany, "fiscal_year": "2025", "from_date": "2024-11-01", "to_date": "2026-02-01", "show_zero_values": 1})
	msgs := serverMessages(t, r.resp)
	if len(msgs) != 2 || msgs[0] != "From Date should be within the Fiscal Year. Assuming From Date = 01-01-2025" ||
		msgs[1] != "To Date should be within the Fiscal Year. Assuming To Date = 31-12-2025" {
		t.Fatalf("messages %q", msgs)
	}
	if r.rows[0]["from_date"] != "2025-01-01" || r.rows[0]["to_date"] != "2025-12-31" {
		t.Fatalf("dates not clamped: %v", r.rows[0])
	}
	if blank := r.rows[len(r.rows)-2]; len(blank) != 0 {
		t.Fatalf("show_zero_values keeps the blank row before the total, got %v", blank)
	}
	u := s.User("all-companies")
	expectError(t, runReport(t, s, u, "Trial Balance", map[string]any{"company": auCompany}, nil).resp, 417, "ValidationError", "Fiscal Year None is required")
	expectError(t, runReport(t, s, u, "Trial Balance", map[string]any{"company": auCompany, "fiscal_year": "2031"}, nil).resp, 417, "ValidationError", "Fiscal Year 2031 does not exist")
	expectError(t, runReport(t, s, u, "Trial Balance", map[string]any{"company": auCompany, "fiscal_year": "2025", "from_date": "2025-05-01", "to_date": "2025-04-01"}, nil).resp,
		417, "ValidationError", "From Date cannot be greater than To Date")
}

// incomeByPeriod sums credit - debit of a root type's accounts per period
// (from, to inclusive) from the GL documents.
func incomeByPeriod(ds *Dataset, company, rootType string, periods [][2]string) []int64 {
	out := make([]int64, len(periods))
	for _, e := range liveGL(ds, company) {
		if ds.Get("Account", e.Str("account")).Str("root_type") != rootType {
			continue
		}
		for i, p := range periods {
			if d := e.Str("posting_date"); d >= p[0] && d <= p[1] {
				out[i] += e.Dec("credit").Cents() - e.Dec("debit").Cents()
			}
		}
	}
	return out
}

func TestProfitAndLossQuarterly(t *testing.T) {
	s := testServer(t)
	ds := s.Data()
	r := mustReport(t, s, "Profit and Loss Statement", map[string]any{"company": usCompany, "filter_based_on": "Fiscal Year",
		"from_fiscal_year": "2025", "to_fiscal_year": "2025", "periodicity": "Quarterly"})
	if got := strings.Join(fieldnames(r.columns), ","); got != "account,currency,mar_2025,jun_2025,sep_2025,dec_2025,total" {
		t.Fatalf("columns %s", got)
	}
	if r.columns[2]["label"] != "Jan 25-Mar 25" || r.columns[5]["label"] != "Oct 25-Dec 25" {
		t.Fatalf("labels %v %v", r.columns[2]["label"], r.columns[5]["label"])
	}
	periods := [][2]string{{"2025-01-01", "2025-03-31"}, {"2025-04-01", "2025-06-30"}, {"2025-07-01", "2025-09-30"}, {"2025-10-01", "2025-12-31"}}
	income := incomeByPeriod(ds, usCompany, "Income", periods)
	expense := incomeByPeriod(ds, usCompany, "Expense", periods)
	rows := map[string]map[string]any{}
	for _, row := range r.rows {
		rows[cstr(row["account"])] = row
	}
	ti, te, np := rows["'Total Income (Credit)'"], rows["'Total Expense (Debit)'"], rows["'Profit for the year'"]
	if ti == nil || te == nil || np == nil {
		t.Fatalf("missing total rows in %v", sortedKeys(rows))
	}
	var net int64
	for i, key := range []string{"mar_2025", "jun_2025", "sep_2025", "dec_2025"} {
		if cents(t, ti[key]) != income[i] || cents(t, te[key]) != -expense[i] || cents(t, np[key]) != income[i]+expense[i] {
			t.Errorf("%s: income %v/%d expense %v/%d net %v", key, ti[key], income[i], te[key], -expense[i], np[key])
		}
		net += income[i] + expense[i]
	}
	if cents(t, r.msg["skip_total_row"]) != net || cents(t, np["total"]) != net {
		t.Errorf("skip_total_row %v, net profit %d", r.msg["skip_total_row"], net)
	}
	summary := r.msg["report_summary"].([]any)
	last := summary[4].(map[string]any)
	if len(summary) != 5 || last["label"] != "Net Profit" || cents(t, last["value"]) != net || last["indicator"] != "Green" {
		t.Errorf("report_summary %v", summary)
	}
	if rows["Income - DSUS"]["opening_balance"] != jsonNumber("-0.0") || rows["Income - DSUS"]["parent_account"] != "" {
		t.Errorf("income root row %v", rows["Income - DSUS"])
	}
	if chart := r.msg["chart"].(map[string]any); chart["type"] != "bar" || len(chart["data"].(map[string]any)["datasets"].([]any)) != 3 {
		t.Errorf("chart %v", chart)
	}
	if r.msg["add_total_row"] != json0 {
		t.Errorf("add_total_row %v", r.msg["add_total_row"])
	}
}

func TestProfitAndLossYearlyMonthlyAndErrors(t *testing.T) {
	s := testServer(t)
	r := mustReport(t, s, "Profit and Loss Statement", map[string]any{"company": nzCompany, "filter_based_on": "Fiscal Year",
		"from_fiscal_year": "2025", "to_fiscal_year": "2026", "periodicity": "Yearly"})
	if got := strings.Join(fieldnames(r.columns), ","); got != "account,currency,dec_2025,dec_2026" || r.columns[3]["label"] != "2026" {
		t.Fatalf("yearly columns %s %v", got, r.columns[3]["label"])
	}
	r = mustReport(t, s, "Profit and Loss Statement", map[string]any{"company": nzCompany, "filter_based_on": "Date Range",
		"period_start_date": "2025-02-10", "period_end_date": "2025-04-20", "periodicity": "Monthly"})
	if got := strings.Join(fieldnames(r.columns), ","); got != "account,currency,feb_2025,mar_2025,apr_2025,total" || r.columns[2]["label"] != "Feb 2025" {
		t.Fatalf("monthly columns %s %v", got, r.columns[2]["label"])
	}
	r = mustReport(t, s, "Profit and Loss Statement", map[string]any{"company": nzCompany, "filter_based_on": "Fiscal Year",
		"from_fiscal_year": "2025", "to_fiscal_year": "2025", "periodicity": "Yearly"})
	if summary := r.msg["report_summary"].([]any); summary[0].(map[string]any)["label"] != "Total Income This Year" {
		t.Fatalf("yearly summary %v", summary[0])
	}
	u := s.User("all-companies")
	for _, c := range []struct {
		f           map[string]any
		status      int
		exc, substr string
	}{
		{map[string]any{"company": nzCompany, "filter_based_on": "Fiscal Year", "from_fiscal_year": "2025", "to_fiscal_year": "2025"}, 500, "KeyError", "None"},
		{map[string]any{"company": nzCompany, "filter_based_on": "Date Range", "periodicity": "Yearly"}, 417, "ValidationError", "From Date and To Date are mandatory"},
		{map[string]any{"company": nzCompany, "filter_based_on": "Fiscal Year", "periodicity": "Yearly"}, 417, "ValidationError", "Start Year and End Year are mandatory"},
		{map[string]any{"company": nzCompany, "filter_based_on": "Date Range", "period_start_date": "2025-05-01", "period_end_date": "2025-04-01", "periodicity": "Yearly"}, 417, "ValidationError", "To Date cannot be less than From Date"},
		{map[string]any{"company": nzCompany, "filter_based_on": "Date Range", "period_start_date": "2024-01-01", "period_end_date": "2024-03-31", "periodicity": "Monthly"}, 417, "FiscalYearError", "Date 31-01-2024 is not in any active Fiscal Year for <strong>Demo Holdings NZ Ltd</strong>"},
	} {
		expectError(t, runReport(t, s, u, "Profit and Loss Statement", c.f, nil).resp, c.status, c.exc, c.substr)
	}
}
