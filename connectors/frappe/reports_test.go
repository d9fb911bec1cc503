package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Report expectations are computed from the seeded ledger: the Payment
// Ledger and General Ledger entries the simulator's vouchers posted, the
// Stock Ledger, and the invoices themselves.

// simToday is the simulator's fixed "today".
func simToday(t *testing.T) string { return testSim(t).Data().Today }

// openBalances groups the Payment Ledger of one side into document
// balances in company currency, as the ledger defines them: every entry
// counts against its against_voucher (a return that does not update its
// own outstanding counts against the invoice it returns).
type openBalance struct {
	voucherType, voucher, party, due string
	amount                           *big.Rat
}

func openBalances(t *testing.T, company, accountType, invoiceType, asOf string) map[string]*openBalance {
	t.Helper()
	data := testSim(t).Data()
	returns := map[string]string{}
	for _, d := range data.List(invoiceType) {
		if d.Int("is_return") == 1 && d.Int("docstatus") == 1 && d.Int("update_outstanding_for_self") == 0 && d.Str("company") == company {
			returns[d.Name] = d.Str("return_against")
		}
	}
	out := map[string]*openBalance{}
	for _, p := range data.List("Payment Ledger Entry") {
		if p.Str("company") != company || p.Str("account_type") != accountType || p.Int("delinked") != 0 || p.Str("posting_date") > asOf {
			continue
		}
		vt, vn := p.Str("against_voucher_type"), p.Str("against_voucher_no")
		if orig, ok := returns[vn]; ok && vt == invoiceType {
			vn = orig
		}
		k := p.Str("account") + "|" + vt + "|" + vn + "|" + p.Str("party")
		b := out[k]
		if b == nil {
			b = &openBalance{voucherType: vt, voucher: vn, party: p.Str("party"), amount: new(big.Rat), due: p.Str("posting_date")}
			if inv := data.Get(invoiceType, vn); vt == invoiceType && inv != nil && inv.Str("due_date") != "" {
				b.due = inv.Str("due_date")
			}
			out[k] = b
		}
		if vt != invoiceType && p.Str("voucher_no") == vn && p.Str("posting_date") < b.due {
			b.due = p.Str("posting_date")
		}
		b.amount.Add(b.amount, p.Dec("amount").Rat())
	}
	return out
}

func TestReceivableAndPayableSummariesEqualTheLedger(t *testing.T) {
	asOf := simToday(t)
	for _, side := range []struct {
		tool, accountType, invoiceType string
	}{
		{"get_accounts_receivable_summary", "Receivable", "Sales Invoice"},
		{"get_accounts_payable_summary", "Payable", "Purchase Invoice"},
	} {
		for _, company := range companyNames(t) {
			t.Run(side.tool+"/"+company, func(t *testing.T) {
				balances := openBalances(t, company, side.accountType, side.invoiceType, asOf)
				total, positive, credits, overdue := new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)
				parties := map[string]bool{}
				for _, b := range balances {
					total.Add(total, b.amount)
					switch b.amount.Sign() {
					case 1:
						positive.Add(positive, b.amount)
						if b.due < asOf {
							overdue.Add(overdue, b.amount)
						}
					case -1:
						credits.Add(credits, b.amount)
					}
					if b.amount.Sign() != 0 {
						parties[b.party] = true
					}
				}
				out := mustCall(t, allCompanies, side.tool, map[string]any{"company": company, "report_date": asOf, "top": 50})
				tot := out["totals"].(map[string]any)
				for name, want := range map[string]*big.Rat{"outstanding": total, "positive_outstanding": positive, "credits": credits} {
					if got := rat(t, tot[name]); !ratEq(got, want) {
						t.Errorf("%s = %s, want %s", name, got.FloatString(2), want.FloatString(2))
					}
				}
				if out["overdue_complete"] != true {
					t.Fatalf("overdue not complete: %v", out["warnings"])
				}
				if got := rat(t, out["overdue"]); !ratEq(got, overdue) {
					t.Errorf("overdue = %s, want %s", got.FloatString(2), overdue.FloatString(2))
				}
				ageing := new(big.Rat)
				for _, b := range out["ageing"].([]any) {
					ageing.Add(ageing, rat(t, b.(map[string]any)["amount"]))
				}
				if !ratEq(ageing, total) {
					t.Errorf("ageing adds up to %s, outstanding is %s", ageing.FloatString(2), total.FloatString(2))
				}
				if got := mustInt(t, out["party_count"]); got != len(parties) {
					t.Errorf("party_count %d, want %d", got, len(parties))
				}
			})
		}
	}
}

func TestReceivableTotalIsTheOutstandingOfSubmittedInvoices(t *testing.T) {
	// For invoices kept in the company currency, the open invoice rows of
	// the receivables report add up to the outstanding_amount of the
	// submitted invoices.
	asOf := simToday(t)
	for _, company := range companyNames(t) {
		var companyCcy string
		for _, c := range testSim(t).Data().List("Company") {
			if c.Name == company {
				companyCcy = c.Str("default_currency")
			}
		}
		home := map[string]*frappetest.Doc{}
		want := new(big.Rat)
		for _, d := range docsWhere(t, "Sales Invoice", func(d *frappetest.Doc) bool {
			return d.Str("company") == company && d.Int("docstatus") == 1 && d.Str("party_account_currency") == companyCcy && d.Str("posting_date") <= asOf
		}) {
			home[d.Name] = d
			want.Add(want, d.Dec("outstanding_amount").Rat())
		}
		got := new(big.Rat)
		rows := walkReport(t, allCompanies, "get_accounts_receivable", map[string]any{"company": company, "report_date": asOf})
		for _, r := range rows {
			if r["voucher_type"] == "Sales Invoice" && home[r["voucher_no"].(string)] != nil {
				got.Add(got, rat(t, r["outstanding"]))
			}
		}
		if !ratEq(got, want) {
			t.Errorf("%s: invoice rows add up to %s, invoices' outstanding to %s", company, got.FloatString(2), want.FloatString(2))
		}
	}
}

// walkReport pages through a row-based report with next_offset and checks
// that the pages add up to row_count.
func walkReport(t *testing.T, role, tool string, args map[string]any) []map[string]any {
	t.Helper()
	var rows []map[string]any
	offset, rowCount := 0, -1
	for page := 0; page < 200; page++ {
		a := map[string]any{"offset": offset, "limit": 40}
		for k, v := range args {
			a[k] = v
		}
		out := mustCall(t, role, tool, a)
		n := mustInt(t, out["row_count"])
		if rowCount >= 0 && n != rowCount {
			t.Fatalf("row_count changed from %d to %d", rowCount, n)
		}
		rowCount = n
		for _, r := range out["rows"].([]any) {
			rows = append(rows, r.(map[string]any))
		}
		if out["next_offset"] == nil {
			if out["complete"] != true || len(rows) != rowCount {
				t.Fatalf("walked %d rows of %d, complete %v", len(rows), rowCount, out["complete"])
			}
			return rows
		}
		offset = mustInt(t, out["next_offset"])
	}
	t.Fatal("too many pages")
	return nil
}

// glSums adds up GL Entries of company with posting dates in [from, to]
// (from "" means from the beginning), keeping those keep accepts.
func glSums(t *testing.T, company, from, to string, keep func(*frappetest.Doc) bool) (debit, credit *big.Rat) {
	t.Helper()
	debit, credit = new(big.Rat), new(big.Rat)
	for _, g := range testSim(t).Data().List("GL Entry") {
		d := g.Str("posting_date")
		if g.Str("company") != company || g.Int("is_cancelled") != 0 || d > to || d < from || !keep(g) {
			continue
		}
		debit.Add(debit, g.Dec("debit").Rat())
		credit.Add(credit, g.Dec("credit").Rat())
	}
	return debit, credit
}

func all(*frappetest.Doc) bool { return true }

func TestGeneralLedgerEqualsGLEntries(t *testing.T) {
	company, from, to := visibleCompany(t), "2025-04-01", "2025-06-30"
	debit, credit := glSums(t, company, from, to, all)
	args := map[string]any{"company": company, "from_date": from, "to_date": to}
	rows := walkReport(t, allCompanies, "get_general_ledger", args)
	sumD, sumC := new(big.Rat), new(big.Rat)
	for _, r := range rows {
		sumD.Add(sumD, rat(t, r["debit"]))
		sumC.Add(sumC, rat(t, r["credit"]))
	}
	if !ratEq(sumD, debit) || !ratEq(sumC, credit) {
		t.Fatalf("entries add up to %s/%s, GL Entries to %s/%s", sumD.FloatString(2), sumC.FloatString(2), debit.FloatString(2), credit.FloatString(2))
	}
	out := mustCall(t, allCompanies, "get_general_ledger", args)
	total := out["total"].(map[string]any)
	if !ratEq(rat(t, total["debit"]), debit) || !ratEq(rat(t, total["credit"]), credit) {
		t.Fatalf("total row %v, want %s/%s", total, debit.FloatString(2), credit.FloatString(2))
	}

	// One account: opening is everything before from_date.
	account := "Debtors - " + abbrOf(t, company)
	onAccount := func(g *frappetest.Doc) bool { return g.Str("account") == account }
	od, oc := glSums(t, company, "", "2025-03-31", onAccount)
	out = mustCall(t, allCompanies, "get_general_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "account": account})
	opening := out["opening"].(map[string]any)
	if got, want := rat(t, opening["balance"]), new(big.Rat).Sub(od, oc); !ratEq(got, want) {
		t.Fatalf("opening balance of %s = %s, want %s", account, got.FloatString(2), want.FloatString(2))
	}
}

// ERPNext adds up General Ledger balances as Python floats, so the
// simulator's answers carry binary noise (40310.88000000001); the tool's
// balances equal the seeded GL Entries added up in cents.
func TestGeneralLedgerBalancesAreExactDespiteFloatNoise(t *testing.T) {
	company := "Demo Holdings NZ Ltd"
	for _, tc := range []struct{ account, from, to string }{
		{"Administrative Expenses - DHNZ", "2025-07-01", "2025-07-31"},
		// Payments cancel invoices here, so the balance swings around zero
		// and the noise sits at the 13th significant digit (-1787.8599999999933).
		{"Creditors - DHNZ", "2025-04-01", "2025-06-30"},
	} {
		account, from, to := tc.account, tc.from, tc.to
		// The ERP's own answer has balances that are not whole cents.
		f, _ := json.Marshal(map[string]any{"company": company, "from_date": from, "to_date": to, "account": []string{account},
			"categorize_by": "Categorize by Voucher (Consolidated)", "include_dimensions": 1, "include_default_book_entries": 1})
		c := invocation{role: allCompanies}.newCall(t, nil)
		body, err := newClient(c.Site, c.HTTP).getBody(context.Background(), "/api/method/frappe.desk.query_report.run", url.Values{"report_name": {reportGeneralLedger}, "filters": {string(f)}})
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Message struct{ Result []map[string]any } `json:"message"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		noisy := 0
		for _, r := range raw.Message.Result {
			if b, ok := r["balance"].(json.Number); ok && !rat(t, b).Mul(rat(t, b), big.NewRat(100, 1)).IsInt() {
				noisy++
			}
		}
		if noisy == 0 {
			t.Fatalf("%s: the ERP's balances are all whole cents; pick an account with float noise", account)
		}

		// The seeded ledger in cents, one movement per voucher (and party,
		// cost centre and project) as "Categorize by Voucher (Consolidated)"
		// shows it, in posting order.
		type movement struct {
			key string
			net int64
		}
		var entries []*frappetest.Doc
		var opening int64
		for _, g := range testSim(t).Data().List("GL Entry") {
			if g.Str("company") != company || g.Str("account") != account || g.Int("is_cancelled") != 0 || g.Str("posting_date") > to {
				continue
			}
			if g.Str("posting_date") < from {
				opening += g.Dec("debit").Cents() - g.Dec("credit").Cents()
			} else {
				entries = append(entries, g)
			}
		}
		sort.SliceStable(entries, func(i, j int) bool {
			a, b := entries[i], entries[j]
			return a.Str("posting_date") < b.Str("posting_date") || a.Str("posting_date") == b.Str("posting_date") && a.Str("creation") < b.Str("creation")
		})
		var moves []*movement
		byKey := map[string]*movement{}
		for _, g := range entries {
			k := strings.Join([]string{g.Str("posting_date"), g.Str("voucher_no"), g.Str("party"), g.Str("cost_center"), g.Str("project")}, "|")
			if byKey[k] == nil {
				byKey[k] = &movement{key: g.Str("posting_date") + "|" + g.Str("voucher_no")}
				moves = append(moves, byKey[k])
			}
			byKey[k].net += g.Dec("debit").Cents() - g.Dec("credit").Cents()
		}
		out := mustCall(t, allCompanies, "get_general_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "account": account})
		rows := out["rows"].([]any)
		if len(rows) != len(moves) || out["complete"] != true {
			t.Fatalf("%s: %d rows, seeded %d vouchers", account, len(rows), len(moves))
		}
		inCents := func(c int64) json.Number { return decimalNumber(big.NewRat(c, 100)) }
		balance, moved := opening, int64(0)
		for i, r := range rows {
			row := r.(map[string]any)
			if k := str(row["posting_date"]) + "|" + str(row["voucher_no"]); k != moves[i].key {
				t.Fatalf("%s row %d is %s, seeded %s", account, i, k, moves[i].key)
			}
			balance, moved = balance+moves[i].net, moved+moves[i].net
			if got := row["balance"]; got != inCents(balance) {
				t.Errorf("%s row %d: balance %v, ledger %v", account, i, got, inCents(balance))
			}
		}
		if got := out["opening"].(map[string]any)["balance"]; got != inCents(opening) {
			t.Errorf("%s: opening %v, ledger %v", account, got, inCents(opening))
		}
		if got := out["total"].(map[string]any)["balance"]; got != inCents(moved) {
			t.Errorf("%s: total %v, ledger %v", account, got, inCents(moved))
		}
		if got := out["closing"].(map[string]any)["balance"]; got != inCents(balance) {
			t.Errorf("%s: closing %v, ledger %v", account, got, inCents(balance))
		}
	}
}

func abbrOf(t *testing.T, company string) string {
	t.Helper()
	for _, c := range testSim(t).Data().List("Company") {
		if c.Name == company {
			return c.Str("abbr")
		}
	}
	t.Fatalf("no company %s", company)
	return ""
}

func TestTrialBalanceAndProfitAndLossEqualGLEntries(t *testing.T) {
	company := visibleCompany(t)
	data := testSim(t).Data()
	rootType := map[string]string{}
	for _, a := range data.List("Account") {
		rootType[a.Name] = a.Str("root_type")
	}
	// Opening entries are the trial balance's opening, not its movement.
	debit, credit := glSums(t, company, "2025-01-01", "2025-12-31", func(g *frappetest.Doc) bool { return g.Str("is_opening") != "Yes" })
	tb := mustCall(t, allCompanies, "get_trial_balance", map[string]any{"company": company, "fiscal_year": "2025"})
	total := tb["total"].(map[string]any)
	if !ratEq(rat(t, total["debit"]), debit) || !ratEq(rat(t, total["credit"]), credit) {
		t.Errorf("trial balance movement %v/%v, GL %s/%s", total["debit"], total["credit"], debit.FloatString(2), credit.FloatString(2))
	}
	if !ratEq(rat(t, total["closing_debit"]), rat(t, total["closing_credit"])) {
		t.Errorf("trial balance does not balance: %v", total)
	}
	// Leaf rows add up to the total.
	leafDebit := new(big.Rat)
	for _, r := range walkReport(t, allCompanies, "get_trial_balance", map[string]any{"company": company, "fiscal_year": "2025"}) {
		if r["is_group_account"] == false {
			leafDebit.Add(leafDebit, rat(t, r["debit"]))
		}
	}
	if !ratEq(leafDebit, debit) {
		t.Errorf("leaf rows add up to %s, want %s", leafDebit.FloatString(2), debit.FloatString(2))
	}

	income := func(g *frappetest.Doc) bool { return rootType[g.Str("account")] == "Income" }
	expense := func(g *frappetest.Doc) bool { return rootType[g.Str("account")] == "Expense" }
	id, ic := glSums(t, company, "2025-01-01", "2025-12-31", income)
	ed, ec := glSums(t, company, "2025-01-01", "2025-12-31", expense)
	profit := new(big.Rat).Sub(new(big.Rat).Sub(ic, id), new(big.Rat).Sub(ed, ec))
	pl := mustCall(t, allCompanies, "get_profit_and_loss", map[string]any{"company": company, "period": "current_fiscal_year", "as_of_date": "2025-08-01"})
	np := pl["net_profit"].(map[string]any)
	var got *big.Rat
	for _, v := range np {
		got = rat(t, v) // Yearly: one period column
	}
	if got == nil || !ratEq(got, profit) {
		t.Errorf("net profit %v, GL %s", np, profit.FloatString(2))
	}
}

// A project with expenses but no income in a period gets no income section
// at all from ERPNext (not even its total row), and one with income but no
// expenses no expense section; every account row still carries the section
// of its root type.
func TestProfitAndLossSectionsWhenOneIsMissing(t *testing.T) {
	data := testSim(t).Data()
	rootType := map[string]string{}
	for _, a := range data.List("Account") {
		rootType[a.Name] = a.Str("root_type")
	}
	company := "Demo Holdings NZ Ltd"
	for _, c := range []struct {
		from, to, has, lacks string
	}{
		{"2025-07-01", "2025-07-31", "Expense", "Income"},
		{"2026-03-01", "2026-03-31", "Income", "Expense"},
	} {
		// The seeded ledger: the project posted to one root type only.
		posted := map[string]int{}
		for _, g := range data.List("GL Entry") {
			d := g.Str("posting_date")
			if g.Str("company") == company && g.Str("project") == "PROJ-0001" && g.Int("is_cancelled") == 0 && d >= c.from && d <= c.to {
				posted[rootType[g.Str("account")]]++
			}
		}
		if posted[c.has] == 0 || posted[c.lacks] != 0 {
			t.Fatalf("%s to %s: seeded entries by root type %v, want %s only", c.from, c.to, posted, c.has)
		}
		pl := mustCall(t, allCompanies, "get_profit_and_loss", map[string]any{"company": company, "project": "PROJ-0001", "from_date": c.from, "to_date": c.to})
		rows := pl["rows"].([]any)
		if len(rows) == 0 {
			t.Fatalf("%s to %s: no account rows", c.from, c.to)
		}
		for _, r := range rows {
			row := r.(map[string]any)
			if want := rootType[row["account"].(string)]; row["section"] != want || want != c.has {
				t.Errorf("%s to %s: %v has section %v, its root type is %s", c.from, c.to, row["account"], row["section"], want)
			}
		}
		totals := map[string]any{"Income": pl["total_income"], "Expense": pl["total_expense"]}
		if totals[c.has] == nil || totals[c.lacks] != nil {
			t.Errorf("%s to %s: total_income %v, total_expense %v", c.from, c.to, pl["total_income"], pl["total_expense"])
		}
		if w := pl["warnings"].([]any); len(w) != 0 {
			t.Errorf("%s to %s: warnings %v", c.from, c.to, w)
		}
	}
}

func TestStockReportsEqualTheStockLedger(t *testing.T) {
	company, from, to := visibleCompany(t), "2025-01-01", "2025-12-31"
	closing, moved := new(big.Rat), new(big.Rat)
	moves := 0
	for _, s := range testSim(t).Data().List("Stock Ledger Entry") {
		d := s.Str("posting_date")
		if s.Str("company") != company || s.Int("is_cancelled") != 0 || d > to {
			continue
		}
		closing.Add(closing, s.Dec("stock_value_difference").Rat())
		if d >= from {
			moved.Add(moved, s.Dec("stock_value_difference").Rat())
			moves++
		}
	}
	sb := mustCall(t, allCompanies, "get_stock_balance", map[string]any{"company": company, "from_date": from, "to_date": to})
	if got := rat(t, sb["totals"].(map[string]any)["bal_val"]); !ratEq(got, closing) {
		t.Errorf("stock value %s, stock ledger %s", got.FloatString(2), closing.FloatString(2))
	}
	sl := mustCall(t, allCompanies, "get_stock_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "limit": 1})
	if got := mustInt(t, sl["row_count"]); got != moves {
		t.Errorf("stock moves %d, want %d", got, moves)
	}
	if got := rat(t, sl["totals"].(map[string]any)["stock_value_difference"]); !ratEq(got, moved) {
		t.Errorf("value change %s, want %s", got.FloatString(2), moved.FloatString(2))
	}
}

func TestBankReconciliationEqualsTheBankLedger(t *testing.T) {
	company, asOf := visibleCompany(t), simToday(t)
	var account string
	for _, a := range testSim(t).Data().List("Account") {
		if a.Str("company") == company && a.Str("account_type") == "Bank" && a.Int("is_group") == 0 {
			account = a.Name
			break
		}
	}
	if account == "" {
		t.Fatal("the seed has no bank account to reconcile")
	}
	d, c := glSums(t, company, "", asOf, func(g *frappetest.Doc) bool { return g.Str("account") == account })
	out := mustCall(t, allCompanies, "get_bank_reconciliation_statement", map[string]any{"company": company, "account": account, "report_date": asOf})
	line := out["summary"].(map[string]any)["balance_as_per_ledger"].(map[string]any)
	got := new(big.Rat).Sub(rat(t, line["debit"]), rat(t, line["credit"]))
	if want := new(big.Rat).Sub(d, c); !ratEq(got, want) {
		t.Errorf("ledger balance %s, want %s", got.FloatString(2), want.FloatString(2))
	}
	// calculated = ledger - outstanding debits + outstanding credits.
	outstanding := out["summary"].(map[string]any)["outstanding_to_clear"].(map[string]any)
	calc := out["summary"].(map[string]any)["calculated_bank_balance"].(map[string]any)
	want := new(big.Rat).Sub(got, rat(t, outstanding["debit"]))
	want.Add(want, rat(t, outstanding["credit"]))
	if gotCalc := new(big.Rat).Sub(rat(t, calc["debit"]), rat(t, calc["credit"])); !ratEq(gotCalc, want) {
		t.Errorf("calculated balance %s, want %s", gotCalc.FloatString(2), want.FloatString(2))
	}
}

func TestPartyBalanceEqualsTheLedger(t *testing.T) {
	company, asOf := visibleCompany(t), simToday(t)
	balances := openBalances(t, company, "Receivable", "Sales Invoice", asOf)
	byParty := map[string]*big.Rat{}
	for _, b := range balances {
		if byParty[b.party] == nil {
			byParty[b.party] = new(big.Rat)
		}
		byParty[b.party].Add(byParty[b.party], b.amount)
	}
	checked := 0
	for party, want := range byParty {
		if want.Sign() == 0 || checked == 3 {
			continue
		}
		checked++
		out := mustCall(t, oneCompany, "get_party_balance", map[string]any{"party_type": "Customer", "party_id": party, "company": company, "report_date": asOf})
		if got := rat(t, out["totals"].(map[string]any)["outstanding"]); !ratEq(got, want) {
			t.Errorf("%s balance %s, want %s", party, got.FloatString(2), want.FloatString(2))
		}
	}
	if checked == 0 {
		t.Fatal("no customer with a balance in the seed")
	}
	_, err := call(t, allCompanies, "get_party_balance", map[string]any{"party_type": "Customer", "party_id": "No Such Customer", "company": company, "report_date": asOf})
	wantCode(t, err, toolerr.NotFound)
	out := mustCall(t, allCompanies, "get_party_balance", map[string]any{"party_type": "Customer", "party_query": "acme widgets", "company": company, "report_date": asOf})
	if out["found"] != false || out["party_match"].(map[string]any)["status"] != matchAmbiguous {
		t.Fatalf("ambiguous name read a balance: %v", out)
	}
}

func TestReportsAcrossTheThreeUsers(t *testing.T) {
	company, asOf := visibleCompany(t), simToday(t)
	bank := ""
	for _, a := range testSim(t).Data().List("Account") {
		if a.Str("company") == company && a.Str("account_type") == "Bank" && a.Int("is_group") == 0 {
			bank = a.Name
			break
		}
	}
	reports := []struct {
		tool string
		args map[string]any
	}{
		{"get_general_ledger", map[string]any{"from_date": "2025-01-01", "to_date": "2025-03-31"}},
		{"get_trial_balance", map[string]any{"fiscal_year": "2025"}},
		{"get_profit_and_loss", map[string]any{"from_date": "2025-01-01", "to_date": "2025-12-31"}},
		{"get_accounts_receivable", map[string]any{"report_date": asOf}},
		{"get_accounts_payable", map[string]any{"report_date": asOf}},
		{"get_accounts_receivable_summary", map[string]any{"report_date": asOf}},
		{"get_accounts_payable_summary", map[string]any{"report_date": asOf}},
		{"get_bank_reconciliation_statement", map[string]any{"account": bank, "report_date": asOf}},
		{"get_stock_balance", map[string]any{"from_date": "2025-01-01", "to_date": "2025-12-31"}},
		{"get_stock_ledger", map[string]any{"from_date": "2025-01-01", "to_date": "2025-03-31"}},
		{"get_party_balance", map[string]any{"report_date": asOf, "party_type": "Customer", "party_query": "Tui Brewing"}},
		{"get_sales_summary", map[string]any{"from_date": "2025-01-01", "to_date": "2025-12-31"}},
	}
	for _, r := range reports {
		t.Run(r.tool, func(t *testing.T) {
			with := func(company string) map[string]any {
				a := map[string]any{"company": company}
				for k, v := range r.args {
					a[k] = v
				}
				return a
			}
			all := mustCall(t, allCompanies, r.tool, with(company))
			mine := mustCall(t, oneCompany, r.tool, with(company))
			for _, k := range []string{"row_count", "totals", "total", "net_profit", "summary", "net_sales"} {
				if a, b := canonicalJSON(all[k]), canonicalJSON(mine[k]); a != b {
					t.Errorf("%s differs for the one-company user in their own company: %s vs %s", k, a, b)
				}
			}
			_, err := call(t, oneCompany, r.tool, with(otherCompany(t)))
			wantCode(t, err, toolerr.PermissionDenied)
			_, err = call(t, noAccounting, r.tool, with(company))
			wantCode(t, err, toolerr.PermissionDenied)
		})
	}
}

func TestDetailedReportsAreBounded(t *testing.T) {
	for _, tool := range []string{"get_general_ledger", "get_stock_ledger", "get_stock_balance", "get_profit_and_loss", "get_sales_summary"} {
		_, err := call(t, allCompanies, tool, map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2026-01-02"})
		te := wantCode(t, err, toolerr.InvalidArgument)
		if !contains(te.Message, "366") {
			t.Errorf("%s: %q does not state the bound", tool, te.Message)
		}
		// 366 days (a leap year's worth) is allowed.
		if _, err := call(t, allCompanies, tool, map[string]any{"company": visibleCompany(t), "from_date": "2025-01-01", "to_date": "2026-01-01"}); err != nil {
			t.Errorf("%s: 366 days refused: %v", tool, err)
		}
	}
}

// canonicalJSON renders a result value for comparison.
func canonicalJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The General Ledger of one foreign-currency account (or one party kept in
// a foreign currency) is, unless told otherwise, presented by ERPNext in
// that account's currency. The tool states its amounts in the company
// currency, so they must be the company-currency amounts the GL Entries
// carry, never the USD amounts under an NZD label.
func TestGeneralLedgerOfAForeignCurrencyAccountIsInTheCompanyCurrency(t *testing.T) {
	data := testSim(t).Data()
	from, to := "2025-01-01", "2025-12-31"
	checked := 0
	for _, c := range data.List("Company") {
		if c.Str("default_currency") == "USD" {
			continue
		}
		company := c.Name
		account := "Debtors USD - " + abbrOf(t, company)
		onAccount := func(g *frappetest.Doc) bool { return g.Str("account") == account }
		debit, credit := glSums(t, company, from, to, onAccount)
		if debit.Sign() == 0 && credit.Sign() == 0 {
			continue
		}
		checked++
		args := map[string]any{"company": company, "from_date": from, "to_date": to, "account": account}
		out := mustCall(t, allCompanies, "get_general_ledger", args)
		if out["currency"] != c.Str("default_currency") {
			t.Errorf("%s: currency %v, want %s", account, out["currency"], c.Str("default_currency"))
		}
		total := out["total"].(map[string]any)
		if !ratEq(rat(t, total["debit"]), debit) || !ratEq(rat(t, total["credit"]), credit) {
			t.Errorf("%s: total %v/%v, GL Entries in %s add up to %s/%s", account, total["debit"], total["credit"], c.Str("default_currency"), debit.FloatString(2), credit.FloatString(2))
		}
		sumD := new(big.Rat)
		for _, r := range walkReport(t, allCompanies, "get_general_ledger", args) {
			sumD.Add(sumD, rat(t, r["debit"]))
		}
		if !ratEq(sumD, debit) {
			t.Errorf("%s: entries debit %s, GL Entries %s", account, sumD.FloatString(2), debit.FloatString(2))
		}
	}
	if checked == 0 {
		t.Fatal("no foreign-currency account has GL Entries in the range")
	}

	// One party whose receivable account is in USD.
	var company, party string
	for _, g := range data.List("GL Entry") {
		if g.Str("party_type") == "Customer" && g.Str("account_currency") == "USD" && companyCurrencyOf(t, g.Str("company")) != "USD" && g.Str("posting_date") >= from && g.Str("posting_date") <= to {
			company, party = g.Str("company"), g.Str("party")
			break
		}
	}
	if party == "" {
		t.Fatal("no customer kept in USD by a non-USD company")
	}
	debit, credit := glSums(t, company, from, to, func(g *frappetest.Doc) bool { return g.Str("party_type") == "Customer" && g.Str("party") == party })
	out := mustCall(t, allCompanies, "get_general_ledger", map[string]any{"company": company, "from_date": from, "to_date": to, "party_type": "Customer", "party": party})
	total := out["total"].(map[string]any)
	if !ratEq(rat(t, total["debit"]), debit) || !ratEq(rat(t, total["credit"]), credit) {
		t.Errorf("%s: total %v/%v, GL Entries in %s add up to %s/%s", party, total["debit"], total["credit"], out["currency"], debit.FloatString(2), credit.FloatString(2))
	}
}

func companyCurrencyOf(t *testing.T, company string) string {
	t.Helper()
	return testSim(t).Data().Get("Company", company).Str("default_currency")
}

// ERPNext picks a company's fiscal year among the years linked to that
// company and the years linked to no company; a year linked only to other
// companies is never that company's. On a site where fiscal year 2026 is
// linked to one company only, another company has no fiscal year in 2026.
func TestFiscalYearOfAnotherCompanyIsNeverUsed(t *testing.T) {
	companies := companyNames(t)
	owner, other := companies[0], companies[1]
	s := frappetest.NewServer(frappetest.Options{FiscalYearCompanies: map[string][]string{"2026": {owner}}})
	defer s.Close()
	inv := invocation{role: allCompanies, sim: s}

	_, err := inv.call(t, "get_trial_balance", map[string]any{"company": other, "from_date": "2026-01-01", "to_date": "2026-03-31"})
	wantCode(t, err, toolerr.NotFound)
	_, err = inv.call(t, "get_profit_and_loss", map[string]any{"company": other, "period": "current_fiscal_year", "as_of_date": "2026-02-01"})
	wantCode(t, err, toolerr.NotFound)

	// The owner still has it, and a year linked to no company is everyone's.
	out, err := inv.call(t, "get_trial_balance", map[string]any{"company": owner, "from_date": "2026-01-01", "to_date": "2026-03-31"})
	if err != nil || out["fiscal_year"] != "2026" {
		t.Fatalf("owner: fiscal_year %v, err %v", out["fiscal_year"], err)
	}
	shared := frappetest.NewServer(frappetest.Options{FiscalYearCompanies: map[string][]string{"2026": {}}})
	defer shared.Close()
	out, err = invocation{role: allCompanies, sim: shared}.call(t, "get_trial_balance", map[string]any{"company": other, "from_date": "2026-01-01", "to_date": "2026-03-31"})
	if err != nil || out["fiscal_year"] != "2026" {
		t.Fatalf("year linked to no company: fiscal_year %v, err %v", out["fiscal_year"], err)
	}
}

// ERPNext clamps a Trial Balance range that leaves the fiscal year to the
// year, saying so only in a message; the tool's date_range must never
// state a range the figures do not cover.
func TestTrialBalanceRangeOutsideItsFiscalYear(t *testing.T) {
	company := visibleCompany(t)
	fy := testSim(t).Data().Get("Fiscal Year", "2025")
	start := fy.Str("year_start_date")
	out, err := call(t, allCompanies, "get_trial_balance", map[string]any{"company": company, "fiscal_year": "2025", "from_date": "2024-12-01", "to_date": "2025-06-30"})
	if err == nil {
		dr := out["date_range"].(map[string]any)
		if dr["from_date"] != start {
			t.Fatalf("date_range %v for a trial balance ERPNext runs from %s", dr, start)
		}
		return
	}
	wantCode(t, err, toolerr.InvalidArgument)
}

// Fiscal Year Company.company ignores User Permissions in ERPNext v15
// (fiscal_year_company.json, "ignore_user_permissions": 1), so a user kept
// to one company still sees that a year belongs to another company, and
// never takes it for a year every company shares.
func TestFiscalYearOfAnotherCompanyForAOneCompanyUser(t *testing.T) {
	mine, other := visibleCompany(t), otherCompany(t)
	s := frappetest.NewServer(frappetest.Options{FiscalYearCompanies: map[string][]string{"2026": {other}}})
	defer s.Close()
	inv := invocation{role: oneCompany, sim: s}
	_, err := inv.call(t, "get_trial_balance", map[string]any{"company": mine, "from_date": "2026-01-01", "to_date": "2026-03-31"})
	wantCode(t, err, toolerr.NotFound)

	out, err := inv.call(t, "list_fiscal_years", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out["data"].([]any) {
		row := r.(map[string]any)
		if row["name"] == "2026" && len(row["companies"].([]any)) == 0 {
			t.Fatalf("year 2026, linked to %s only, is listed as every company's: %v", other, row)
		}
	}
}
