package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// toolResult is a decoded tool result.
type toolResult struct {
	IsError    bool
	Structured map[string]any
	Text       string
}

func (r toolResult) errorCode() string {
	e, _ := r.Structured["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return decodeToolResult(t, name, res)
}

// decodeToolResult checks that a tool result's text and structuredContent
// are the same JSON and decodes it with exact numbers.
func decodeToolResult(t *testing.T, name string, res *mcp.CallToolResult) toolResult {
	t.Helper()
	var out toolResult
	out.IsError = res.IsError
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want 1", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T", name, res.Content[0])
	}
	out.Text = tc.Text
	// The text is the same JSON as structuredContent.
	var fromText map[string]any
	if err := json.Unmarshal([]byte(tc.Text), &fromText); err != nil {
		t.Fatalf("%s: text is not JSON: %v", name, err)
	}
	var fromStructured map[string]any
	_ = json.Unmarshal(raw, &fromStructured)
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(fromStructured)
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: text and structuredContent differ", name)
	}
	// Decode the exact numbers from the text: the SDK turns the numbers of
	// structuredContent into float64s.
	dec := json.NewDecoder(strings.NewReader(tc.Text))
	dec.UseNumber()
	if err := dec.Decode(&out.Structured); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func mustSucceed(t *testing.T, r toolResult, what string) map[string]any {
	t.Helper()
	if r.IsError {
		t.Fatalf("%s failed: %s", what, r.Text)
	}
	return r.Structured
}

// walkPages calls a list tool page by page with next_offset and returns
// every row, failing on a duplicate name.
func walkPages(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) []map[string]any {
	t.Helper()
	var rows []map[string]any
	seen := map[string]bool{}
	offset := 0
	for page := 0; ; page++ {
		if page > 500 {
			t.Fatalf("%s: more than 500 pages", tool)
		}
		a := map[string]any{"offset": offset}
		for k, v := range args {
			a[k] = v
		}
		out := mustSucceed(t, callTool(t, cs, tool, a), tool)
		data := out["data"].([]any)
		for _, r := range data {
			row := r.(map[string]any)
			name := row["name"].(string)
			if seen[name] {
				t.Fatalf("%s: %s appears on two pages", tool, name)
			}
			seen[name] = true
			rows = append(rows, row)
		}
		meta := out["meta"].(map[string]any)
		if meta["next_offset"] == nil {
			if meta["complete"] != true {
				t.Fatalf("%s: last page not marked complete: %v", tool, meta)
			}
			return rows
		}
		next, _ := meta["next_offset"].(json.Number).Int64()
		if int(next) != offset+len(data) {
			t.Fatalf("%s: next_offset %d after %d rows from %d", tool, next, len(data), offset)
		}
		offset = int(next)
	}
}

func names(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r["name"].(string)
	}
	slices.Sort(out)
	return out
}

func docNames(docs []*frappetest.Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Name
	}
	slices.Sort(out)
	return out
}

func TestServiceMCPEndToEnd(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	bot := userWithRole(t, sim, "service")
	site := gw.registerFrappe(t, "acme", sim, bot)
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	data := sim.Data()

	t.Run("tools/list advertises the catalogue with schemas and read-only hints", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range res.Tools {
			got = append(got, tool.Name)
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("%s: readOnlyHint not set", tool.Name)
			}
			if tool.OutputSchema == nil || tool.InputSchema == nil {
				t.Errorf("%s: missing input or output schema", tool.Name)
			}
		}
		want := []string{
			"get_current_user", "list_companies", "list_customers", "list_suppliers", "list_items",
			"list_warehouses", "list_accounts", "list_cost_centres", "list_projects", "list_fiscal_years",
			"list_sales_orders", "list_sales_invoices", "list_purchase_orders", "list_purchase_invoices",
			"list_payments", "list_bank_transactions", "get_document",
			"get_stock_balance", "get_stock_ledger", "get_profit_and_loss", "get_trial_balance", "get_general_ledger",
			"get_accounts_receivable", "get_accounts_payable", "get_bank_reconciliation_statement",
			"get_accounts_receivable_summary", "get_accounts_payable_summary", "get_party_balance",
			"get_sales_summary", "get_stock_risk", "search", "fetch",
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("tool %s missing from %v", w, got)
			}
		}
	})

	t.Run("get_current_user", func(t *testing.T) {
		out := mustSucceed(t, callTool(t, cs, "get_current_user", nil), "get_current_user")
		if out["user"] != bot.Email || out["auth_type"] != "service_token" {
			t.Errorf("got %v", out)
		}
	})

	t.Run("list_companies", func(t *testing.T) {
		rows := walkPages(t, cs, "list_companies", map[string]any{"limit": 2})
		if want := docNames(data.List("Company")); !slices.Equal(names(rows), want) {
			t.Errorf("companies = %v, want %v", names(rows), want)
		}
	})

	t.Run("list_customers walks every enabled customer", func(t *testing.T) {
		rows := walkPages(t, cs, "list_customers", map[string]any{"limit": 7})
		var want []*frappetest.Doc
		for _, c := range data.List("Customer") {
			if c.Int("disabled") == 0 {
				want = append(want, c)
			}
		}
		if !slices.Equal(names(rows), docNames(want)) {
			t.Errorf("walked %d customers, want %d", len(rows), len(want))
		}
	})

	t.Run("list_items and list_companies resolve spoken names", func(t *testing.T) {
		// Seeded: item HW-1001 "Steel Bracket 50mm"; company "Demo
		// Holdings NZ Ltd".
		out := mustSucceed(t, callTool(t, cs, "list_items", map[string]any{"search": "steel bracket 50 mm"}), "list_items")
		m, _ := out["name_match"].(map[string]any)
		if m["status"] != "matched" || m["id"] != "HW-1001" || len(out["data"].([]any)) != 1 {
			t.Errorf("list_items: %v", out)
		}
		out = mustSucceed(t, callTool(t, cs, "list_companies", map[string]any{"search": "demo holdings nz limited", "search_mode": "name"}), "list_companies")
		if m, _ := out["name_match"].(map[string]any); m["status"] != "matched" || m["id"] != "Demo Holdings NZ Ltd" {
			t.Errorf("list_companies: %v", out)
		}
		out = mustSucceed(t, callTool(t, cs, "list_items", map[string]any{"search": "steel bracket 50 mm", "search_mode": "literal"}), "list_items literal")
		if _, ok := out["name_match"]; ok || len(out["data"].([]any)) != 0 {
			t.Errorf("list_items literal: %v", out)
		}
	})

	t.Run("list_sales_invoices pages a company's submitted invoices exactly", func(t *testing.T) {
		company := data.List("Company")[0].Name
		rows := walkPages(t, cs, "list_sales_invoices", map[string]any{"company": company, "docstatus": 1, "limit": 50})
		var want []*frappetest.Doc
		byName := map[string]*frappetest.Doc{}
		for _, inv := range data.List("Sales Invoice") {
			if inv.Str("company") == company && inv.Int("docstatus") == 1 {
				want = append(want, inv)
				byName[inv.Name] = inv
			}
		}
		if len(want) == 0 {
			t.Fatal("seed has no submitted invoices for the first company")
		}
		if !slices.Equal(names(rows), docNames(want)) {
			t.Fatalf("walked %d invoices, want %d", len(rows), len(want))
		}
		for _, r := range rows {
			inv := byName[r["name"].(string)]
			if got, want := numberCents(t, r["grand_total"]), inv.Dec("grand_total").Cents(); got != want {
				t.Errorf("%s grand_total = %d cents, want %d", inv.Name, got, want)
			}
			if r["currency"] != inv.Str("currency") || r["party_account_currency"] != inv.Str("party_account_currency") {
				t.Errorf("%s currencies = %v/%v", inv.Name, r["currency"], r["party_account_currency"])
			}
		}
		// Default order: newest posting date first, then name.
		for i := 1; i < len(rows); i++ {
			a, b := rows[i-1], rows[i]
			if a["posting_date"].(string) < b["posting_date"].(string) ||
				a["posting_date"] == b["posting_date"] && a["name"].(string) < b["name"].(string) {
				t.Fatalf("rows %d and %d out of order", i-1, i)
			}
		}
	})

	t.Run("bank account names are not redacted, account numbers are", func(t *testing.T) {
		var btn *frappetest.Doc
		for _, d := range data.List("Bank Transaction") {
			if d.Str("bank_account") != "" {
				btn = d
				break
			}
		}
		if btn == nil {
			t.Fatal("seed has no bank transaction")
		}
		out := mustSucceed(t, callTool(t, cs, "get_document", map[string]any{"doctype": "Bank Transaction", "name": btn.Name}), "get_document")
		doc := out["document"].(map[string]any)
		if doc["bank_account"] != btn.Str("bank_account") {
			t.Errorf("bank_account = %v, want the Bank Account record %q", doc["bank_account"], btn.Str("bank_account"))
		}
		for _, f := range []string{"bank_party_account_number", "bank_party_iban"} {
			if v, ok := doc[f]; ok && v != "[REDACTED]" {
				t.Errorf("%s = %v was not redacted", f, v)
			}
		}
	})

	t.Run("get_document returns child tables with paging meta", func(t *testing.T) {
		var inv *frappetest.Doc
		for _, d := range data.List("Sales Invoice") {
			if len(d.Table("items")) >= 3 {
				inv = d
				break
			}
		}
		if inv == nil {
			t.Fatal("seed has no invoice with 3 item rows")
		}
		out := mustSucceed(t, callTool(t, cs, "get_document", map[string]any{"doctype": "Sales Invoice", "name": inv.Name, "detail_limit": 2}), "get_document")
		doc := out["document"].(map[string]any)
		items := doc["items"].([]any)
		meta := out["detail_meta"].(map[string]any)["items"].(map[string]any)
		total, _ := meta["total"].(json.Number).Int64()
		if len(items) != 2 || int(total) != len(inv.Table("items")) || meta["next_offset"] == nil {
			t.Errorf("items %d, meta %v, seed rows %d", len(items), meta, len(inv.Table("items")))
		}
		if got, want := numberCents(t, doc["grand_total"]), inv.Dec("grand_total").Cents(); got != want {
			t.Errorf("grand_total %d cents, want %d", got, want)
		}
	})
}

// TestServiceMCPCatalogueAmounts checks amounts, summaries and the
// search/fetch pair end to end: exact numbers survive the MCP transport.
func TestServiceMCPCatalogueAmounts(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	bot := userWithRole(t, sim, "service")
	site := gw.registerFrappe(t, "acme", sim, bot)
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	data := sim.Data()
	company := data.List("Company")[0]
	currency := company.Str("default_currency")

	var invoices []*frappetest.Doc
	for _, inv := range data.List("Sales Invoice") {
		if inv.Str("company") == company.Name && inv.Int("docstatus") == 1 {
			invoices = append(invoices, inv)
		}
	}

	t.Run("list_sales_invoices totals equal the per-invoice sum", func(t *testing.T) {
		var want int64
		n := 0
		for _, inv := range invoices {
			if inv.Str("currency") == currency {
				want += inv.Dec("grand_total").Cents()
				n++
			}
		}
		out := mustSucceed(t, callTool(t, cs, "list_sales_invoices", map[string]any{"company": company.Name, "currency": currency, "docstatus": 1, "summary": "totals"}), "totals")
		s := out["summary"].(map[string]any)
		if got := numberCents(t, s["totals"].(map[string]any)["grand_total"]); got != want {
			t.Errorf("grand_total %d cents, want %d", got, want)
		}
		if got, _ := s["count"].(json.Number).Int64(); int(got) != n {
			t.Errorf("count %d, want %d", got, n)
		}
	})

	t.Run("get_sales_summary equals the per-invoice sum", func(t *testing.T) {
		var want int64
		for _, inv := range invoices {
			if d := inv.Str("posting_date"); d >= "2025-01-01" && d <= "2025-12-31" {
				want += inv.Dec("base_net_total").Cents()
			}
		}
		out := mustSucceed(t, callTool(t, cs, "get_sales_summary", map[string]any{"company": company.Name, "from_date": "2025-01-01", "to_date": "2025-12-31", "group_by": "month"}), "sales summary")
		if got := numberCents(t, out["net_sales"]); got != want {
			t.Errorf("net_sales %d cents, want %d", got, want)
		}
	})

	t.Run("search finds an invoice and fetch reads it", func(t *testing.T) {
		inv := invoices[0]
		out := mustSucceed(t, callTool(t, cs, "search", map[string]any{"query": inv.Name}), "search")
		results := out["results"].([]any)
		if len(results) == 0 || results[0].(map[string]any)["id"] != "Sales Invoice/"+inv.Name {
			t.Fatalf("search %s: %v", inv.Name, results)
		}
		f := mustSucceed(t, callTool(t, cs, "fetch", map[string]any{"id": "Sales Invoice/" + inv.Name}), "fetch")
		if !strings.Contains(f["text"].(string), inv.Str("customer_name")) || !strings.HasSuffix(f["url"].(string), "/app/sales-invoice/"+inv.Name) {
			t.Errorf("fetch: %v", f)
		}
	})

	t.Run("an unknown argument is refused before the ERP is asked", func(t *testing.T) {
		r := callTool(t, cs, "list_payments", map[string]any{"sql": "1=1"})
		if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" {
			t.Errorf("got %s", r.Text)
		}
	})
}

// numberCents converts a JSON number with at most two decimals to cents,
// exactly (no float arithmetic).
func numberCents(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	s := n.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 2 {
		t.Fatalf("%s has more than two decimals", n)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	var c int64
	if _, err := fmt.Sscan(whole+frac, &c); err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	if neg {
		c = -c
	}
	return c
}
