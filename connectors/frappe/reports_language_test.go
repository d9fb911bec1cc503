package frappe

import (
	"math/big"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// germanLabels are example translations of the report labels ERPNext
// builds with _() (not quoted from ERPNext's de.po: only that they are not
// English matters).
var germanLabels = map[string]string{
	"Opening": "Eröffnung", "Total": "Summe", "Closing (Opening + Total)": "Schlussbestand (Eröffnung + Summe)",
	"Total {0} ({1})": "Gesamt {0} ({1})", "Income": "Ertrag", "Expense": "Aufwand", "Credit": "Haben", "Debit": "Soll",
	"Profit for the year": "Jahresergebnis", "'Opening'": "'Anfangsbestand'",
	"Bank Statement balance as per General Ledger": "Kontostand laut Hauptbuch",
	"Outstanding Cheques and Deposits to clear":    "Offene Schecks und Einzahlungen",
	"Cheques and Deposits incorrectly cleared":     "Falsch verrechnete Schecks und Einzahlungen",
	"Calculated Bank Statement balance":            "Errechneter Kontoauszugssaldo",
}

var (
	germanOnce sync.Once
	germanSim  *frappetest.Server
)

// german is a simulator whose report labels are in German; its data is
// the shared seed.
func german(t *testing.T) invocation {
	t.Helper()
	germanOnce.Do(func() { germanSim = frappetest.NewServer(frappetest.Options{Translations: germanLabels}) })
	return invocation{role: allCompanies, sim: germanSim}
}

// TestReportsReadLabelRowsInAnyLanguage: the quoted label rows of the
// General Ledger, Trial Balance and Profit and Loss Statement are
// translated for a user of another language, so the tools recognise them
// by their place and shape, not by their English words; the figures equal
// the seeded GL Entries as for an English user.
func TestReportsReadLabelRowsInAnyLanguage(t *testing.T) {
	inv := german(t)
	company, from, to := visibleCompany(t), "2025-04-01", "2025-06-30"

	debit, credit := glSums(t, company, from, to, all)
	gl, err := inv.call(t, "get_general_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "limit": 500})
	if err != nil {
		t.Fatal(err)
	}
	total, _ := gl["total"].(map[string]any)
	if total == nil || !ratEq(rat(t, total["debit"]), debit) || !ratEq(rat(t, total["credit"]), credit) {
		t.Errorf("General Ledger total %v, GL Entries %s/%s", gl["total"], debit.FloatString(2), credit.FloatString(2))
	}
	if gl["opening"] == nil || gl["closing"] == nil {
		t.Errorf("General Ledger opening %v, closing %v", gl["opening"], gl["closing"])
	}
	for _, r := range gl["rows"].([]any) {
		if r.(map[string]any)["posting_date"] == nil {
			t.Errorf("General Ledger row without a date among the entries: %v", r)
		}
	}

	fyDebit, fyCredit := glSums(t, company, "2025-01-01", "2025-12-31", func(g *frappetest.Doc) bool { return g.Str("is_opening") != "Yes" })
	tb, err := inv.call(t, "get_trial_balance", map[string]any{"company": company, "fiscal_year": "2025", "limit": 500})
	if err != nil {
		t.Fatal(err)
	}
	tbTotal, _ := tb["total"].(map[string]any)
	if tbTotal == nil || !ratEq(rat(t, tbTotal["debit"]), fyDebit) || !ratEq(rat(t, tbTotal["credit"]), fyCredit) {
		t.Errorf("Trial Balance total %v, GL Entries %s/%s", tb["total"], fyDebit.FloatString(2), fyCredit.FloatString(2))
	}
	for _, r := range tb["rows"].([]any) {
		if a, _ := r.(map[string]any)["account"].(string); testSim(t).Data().Get("Account", a) == nil {
			t.Errorf("Trial Balance row %q is not an account", a)
		}
	}

	rootType := map[string]string{}
	for _, a := range testSim(t).Data().List("Account") {
		rootType[a.Name] = a.Str("root_type")
	}
	id, ic := glSums(t, company, "2025-01-01", "2025-12-31", func(g *frappetest.Doc) bool { return rootType[g.Str("account")] == "Income" })
	ed, ec := glSums(t, company, "2025-01-01", "2025-12-31", func(g *frappetest.Doc) bool { return rootType[g.Str("account")] == "Expense" })
	profit := new(big.Rat).Sub(new(big.Rat).Sub(ic, id), new(big.Rat).Sub(ed, ec))
	pl, err := inv.call(t, "get_profit_and_loss", map[string]any{"company": company, "from_date": "2025-01-01", "to_date": "2025-12-31", "limit": 500})
	if err != nil {
		t.Fatal(err)
	}
	np, _ := pl["net_profit"].(map[string]any)
	var got *big.Rat
	for _, v := range np {
		got = rat(t, v) // Yearly: one period column
	}
	if got == nil || !ratEq(got, profit) {
		t.Errorf("net profit %v, GL %s", pl["net_profit"], profit.FloatString(2))
	}
	if pl["total_income"] == nil || pl["total_expense"] == nil {
		t.Errorf("total_income %v, total_expense %v", pl["total_income"], pl["total_expense"])
	}
	for _, r := range pl["rows"].([]any) {
		row := r.(map[string]any)
		if want := rootType[str(row["account"])]; row["section"] != want {
			t.Errorf("%v has section %v, its root type is %q", row["account"], row["section"], want)
		}
	}
	if w := pl["warnings"].([]any); len(w) != 0 {
		t.Errorf("P&L warnings %v", w)
	}

	// A project that posted to one root type only: one section, whose
	// total row is still told apart.
	for _, c := range []struct{ from, to, has string }{{"2025-07-01", "2025-07-31", "Expense"}, {"2026-03-01", "2026-03-31", "Income"}} {
		pl, err := inv.call(t, "get_profit_and_loss", map[string]any{"company": "Demo Holdings NZ Ltd", "project": "PROJ-0001", "from_date": c.from, "to_date": c.to})
		if err != nil {
			t.Fatal(err)
		}
		totals := map[string]any{"Income": pl["total_income"], "Expense": pl["total_expense"]}
		for section, v := range totals {
			if (v != nil) != (section == c.has) {
				t.Errorf("%s to %s: total_income %v, total_expense %v, want only %s", c.from, c.to, pl["total_income"], pl["total_expense"], c.has)
			}
		}
		for _, r := range pl["rows"].([]any) {
			if row := r.(map[string]any); row["section"] != c.has {
				t.Errorf("%s to %s: %v has section %v", c.from, c.to, row["account"], row["section"])
			}
		}
	}
}

// TestStockAndBankReportsReadTranslatedRows: the Stock Ledger's opening
// row and the Bank Reconciliation Statement's summary lines are
// translated too; the tools find them by shape and order, and their
// figures equal the seeded ledgers.
func TestStockAndBankReportsReadTranslatedRows(t *testing.T) {
	inv := german(t)
	company, from, to := visibleCompany(t), "2025-06-01", "2025-06-30"
	var item, wh string
	for _, s := range testSim(t).Data().List("Stock Ledger Entry") {
		if s.Str("company") == company && s.Int("is_cancelled") == 0 && s.Str("posting_date") >= from && s.Str("posting_date") <= to {
			item, wh = s.Str("item_code"), s.Str("warehouse")
			break
		}
	}
	if item == "" {
		t.Fatal("the seed has no stock move in the range")
	}
	var last *frappetest.Doc
	for _, s := range testSim(t).Data().List("Stock Ledger Entry") {
		if s.Str("item_code") == item && s.Str("warehouse") == wh && s.Int("is_cancelled") == 0 && s.Str("posting_date") < from &&
			(last == nil || s.Str("posting_datetime") > last.Str("posting_datetime")) {
			last = s
		}
	}
	sl, err := inv.call(t, "get_stock_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "item_code": item, "warehouse": wh})
	if err != nil {
		t.Fatal(err)
	}
	opening, _ := sl["opening"].(map[string]any)
	if opening == nil {
		t.Fatalf("no opening: %v", sl["opening"])
	}
	want := new(big.Rat)
	if last != nil {
		want = last.Dec("qty_after_transaction").Rat()
	}
	if got := rat(t, opening["qty_after_transaction"]); !ratEq(got, want) {
		t.Errorf("opening quantity %s, want %s", got.FloatString(3), want.FloatString(3))
	}
	for _, r := range sl["rows"].([]any) {
		if r.(map[string]any)["voucher_no"] == nil {
			t.Errorf("a row that is not a stock move: %v", r)
		}
	}

	var account string
	for _, a := range testSim(t).Data().List("Account") {
		if a.Str("company") == company && a.Str("account_type") == "Bank" && a.Int("is_group") == 0 {
			account = a.Name
			break
		}
	}
	asOf := simToday(t)
	d, c := glSums(t, company, "", asOf, func(g *frappetest.Doc) bool { return g.Str("account") == account })
	brs, err := inv.call(t, "get_bank_reconciliation_statement", map[string]any{"company": company, "account": account, "report_date": asOf})
	if err != nil {
		t.Fatal(err)
	}
	summary := brs["summary"].(map[string]any)
	for _, k := range []string{"balance_as_per_ledger", "outstanding_to_clear", "incorrectly_cleared", "calculated_bank_balance"} {
		if summary[k] == nil {
			t.Errorf("summary lacks %s: %v", k, summary)
		}
	}
	if line, ok := summary["balance_as_per_ledger"].(map[string]any); ok {
		got := new(big.Rat).Sub(rat(t, line["debit"]), rat(t, line["credit"]))
		if want := new(big.Rat).Sub(d, c); !ratEq(got, want) {
			t.Errorf("ledger balance %s, want %s", got.FloatString(2), want.FloatString(2))
		}
	}
	for _, r := range brs["rows"].([]any) {
		if r.(map[string]any)["payment_document"] == nil {
			t.Errorf("a summary line among the entries: %v", r)
		}
	}
}
