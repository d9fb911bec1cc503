package frappe

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Traps of issue 15 for search and spoken names: more candidates than one
// page, a DocType the site lacks, and a LIKE that does not ignore accents.

// newSim starts a simulator with opts for one test.
func newSim(t *testing.T, opts frappetest.Options) *frappetest.Server {
	t.Helper()
	s := frappetest.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// resultIDs returns the ids of a search answer, in order.
func resultIDs(out map[string]any) []string {
	var ids []string
	for _, r := range out["results"].([]any) {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

// notSearchedOf returns a search answer's not_searched entries by doctype.
func notSearchedOf(out map[string]any) map[string]map[string]any {
	m := map[string]map[string]any{}
	for _, n := range out["not_searched"].([]any) {
		e := n.(map[string]any)
		m[e["doctype"].(string)] = e
	}
	return m
}

// fillerCustomers are n customer names containing "100" but not "100%".
func fillerCustomers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Top 100 Retail %02d Ltd", i+1)
	}
	return out
}

// A customer with "%" in its name, older than the 60 customers created
// after it that share its digits, is still found: the search reads past
// the first candidates.
func TestSearchFindsAnOldCustomerWithPercent(t *testing.T) {
	s := newSim(t, frappetest.Options{ExtraCustomers: fillerCustomers(60)})
	out, err := invocation{role: allCompanies, sim: s}.call(t, "search", map[string]any{"query": "100% pure"})
	if err != nil {
		t.Fatal(err)
	}
	var customers []string
	for _, id := range resultIDs(out) {
		if strings.HasPrefix(id, "Customer/") {
			customers = append(customers, id)
		}
	}
	if !slices.Equal(customers, []string{"Customer/100% Pure Juice Co Pty Ltd"}) {
		t.Fatalf("customers %v, want only the 100%% Pure Juice one", customers)
	}
	if out["complete"] != true || len(out["not_searched"].([]any)) != 0 {
		t.Fatalf("complete %v, not_searched %v", out["complete"], out["not_searched"])
	}
}

// "<number prefix> <customer word>" finds the customer's invoices although
// hundreds of invoices share the prefix.
func TestSearchPrefixAndCustomerWord(t *testing.T) {
	var want []*frappetest.Doc
	for _, d := range testSim(t).Data().List("Sales Invoice") {
		if strings.HasPrefix(d.Name, "ACC-SINV-2025-") && strings.Contains(d.Str("customer_name"), "Berliner") {
			want = append(want, d)
		}
	}
	if len(want) < perSourceResults {
		t.Fatalf("the seeded data has %d Berliner invoices of 2025; the test needs %d", len(want), perSourceResults)
	}
	sort.Slice(want, func(i, j int) bool {
		if a, b := want[i].Str("modified"), want[j].Str("modified"); a != b {
			return a > b
		}
		return want[i].Name > want[j].Name
	})
	var wantIDs []string
	for _, d := range want[:perSourceResults] {
		wantIDs = append(wantIDs, "Sales Invoice/"+d.Name)
	}
	out := mustCall(t, allCompanies, "search", map[string]any{"query": "ACC-SINV-2025 berliner"})
	var got []string
	for _, id := range resultIDs(out) {
		if strings.HasPrefix(id, "Sales Invoice/") {
			got = append(got, id)
		}
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("invoices %v, want the %d most recent of Berliner's %d: %v", got, perSourceResults, len(want), wantIDs)
	}
	if out["complete"] != true {
		t.Fatalf("complete %v: %v", out["complete"], out["not_searched"])
	}
}

// When the candidates outnumber the scan bound, the answer says which kind
// was searched only in part instead of implying there is no match.
func TestSearchSaysWhatItDidNotRead(t *testing.T) {
	s := newSim(t, frappetest.Options{ExtraSalesInvoices: searchScanBound})
	out, err := invocation{role: allCompanies, sim: s}.call(t, "search", map[string]any{"query": "ACC-SINV zzqx"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := resultIDs(out); len(ids) != 0 {
		t.Fatalf("results %v", ids)
	}
	ns := notSearchedOf(out)
	si := ns["Sales Invoice"]
	if out["complete"] != false || si == nil || si["partial"] != true || !strings.Contains(si["reason"].(string), fmt.Sprint(searchScanBound)) {
		t.Fatalf("complete %v, not_searched %v", out["complete"], out["not_searched"])
	}
	if len(ns) != 1 {
		t.Fatalf("only Sales Invoice has more candidates than the bound: %v", out["not_searched"])
	}
}

// A DocType the site lacks is listed as not searched; the rest is answered.
func TestSearchWithoutADoctype(t *testing.T) {
	s := newSim(t, frappetest.Options{MissingDoctypes: []string{"Bank Transaction"}})
	for _, role := range []string{allCompanies, noAccounting} {
		out, err := invocation{role: role, sim: s}.call(t, "search", map[string]any{"query": "harbour freight"})
		if err != nil {
			t.Fatalf("%s: %v", role, err)
		}
		if !slices.Contains(resultIDs(out), "Customer/Harbour Freight Ltd") {
			t.Fatalf("%s: results %v", role, resultIDs(out))
		}
		ns := notSearchedOf(out)
		bt := ns["Bank Transaction"]
		if out["complete"] != false || bt == nil || bt["partial"] != false || !strings.Contains(bt["reason"].(string), "DocType not found") {
			t.Fatalf("%s: complete %v, not_searched %v", role, out["complete"], out["not_searched"])
		}
		if role == noAccounting && ns["Sales Invoice"]["reason"] != "this user may not read it" {
			t.Fatalf("not_searched %v", out["not_searched"])
		}
	}
}

// accentSim is a site whose LIKE does not ignore accents (Frappe on
// PostgreSQL), with two customers named with accents.
func accentSim(t *testing.T) *frappetest.Server {
	return newSim(t, frappetest.Options{AccentSensitiveLike: true, ExtraCustomers: []string{"Zürich Partners AG", "Crème Brûlée Ltd"}})
}

func TestSearchFoldsAccentsOnAnAccentSensitiveERP(t *testing.T) {
	s := accentSim(t)
	for query, want := range map[string]string{
		"zurich":          "Customer/Zürich Partners AG",
		"zurich partners": "Customer/Zürich Partners AG",
		"creme brulee":    "Customer/Crème Brûlée Ltd",
		"CREME":           "Customer/Crème Brûlée Ltd",
		"aroha cafe":      "Customer/Aroha Café Limited",
		"muller":          "Customer/Müller Maschinenbau GmbH",
		"Zürich":          "Customer/Zürich Partners AG",
	} {
		out, err := invocation{role: allCompanies, sim: s}.call(t, "search", map[string]any{"query": query})
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if ids := resultIDs(out); !slices.Contains(ids, want) {
			t.Errorf("%q: results %v lack %s", query, ids, want)
		}
	}
}

func TestSpokenNamesFoldAccentsOnAnAccentSensitiveERP(t *testing.T) {
	s := accentSim(t)
	for _, tc := range []struct{ query, status, id string }{
		{"creme brulee", matchMatched, "Crème Brûlée Ltd"},
		{"Zurich Partners", matchMatched, "Zürich Partners AG"},
		{"aroha cafe", matchMatched, "Aroha Café Limited"},
		{"muller", matchAmbiguous, "Müller Maschinenbau GmbH"},
	} {
		out, err := invocation{role: allCompanies, sim: s}.call(t, "list_sales_invoices", map[string]any{"customer_query": tc.query, "limit": 3})
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		m := out["party_match"].(map[string]any)
		if m["status"] != tc.status {
			t.Errorf("%q: status %v (%v), want %s", tc.query, m["status"], m["message"], tc.status)
			continue
		}
		var ids []string
		for _, c := range m["candidates"].([]any) {
			ids = append(ids, c.(map[string]any)["id"].(string))
		}
		if !slices.Equal(ids, []string{tc.id}) {
			t.Errorf("%q: candidates %v, want %s", tc.query, ids, tc.id)
		}
	}
	_, err := invocation{role: allCompanies, sim: s}.call(t, "list_sales_invoices", map[string]any{"customer": "Crème Brûlée Ltd", "customer_query": "creme"})
	wantCode(t, err, toolerr.InvalidArgument)
}

// A spoken name is resolved past the first page of parties sharing its
// word, and the answer says when the parties read were not all of them.
func TestSpokenNamesReadPastOnePage(t *testing.T) {
	fillers := make([]string, partyPage+100)
	for i := range fillers {
		fillers[i] = fmt.Sprintf("Acme Filler %03d Ltd", i+1)
	}
	s := newSim(t, frappetest.Options{ExtraCustomers: fillers})
	out, err := invocation{role: allCompanies, sim: s}.call(t, "list_sales_invoices", map[string]any{"customer_query": "acme widgets", "limit": 1})
	if err != nil {
		t.Fatal(err)
	}
	m := out["party_match"].(map[string]any)
	var ids []string
	for _, c := range m["candidates"].([]any) {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	if m["status"] != matchAmbiguous || m["method"] != "normalised" || !slices.Equal(ids, []string{"Acme Widgets Inc", "Acme Widgets LLC"}) || m["candidates_truncated"] != false {
		t.Fatalf("party_match %v", m)
	}

	fillers = make([]string, partyScanBound)
	for i := range fillers {
		fillers[i] = fmt.Sprintf("Acme Filler %04d Ltd", i+1)
	}
	s = newSim(t, frappetest.Options{ExtraCustomers: fillers})
	out, err = invocation{role: allCompanies, sim: s}.call(t, "list_sales_invoices", map[string]any{"customer_query": "acme widgets", "limit": 1})
	if err != nil {
		t.Fatal(err)
	}
	if m := out["party_match"].(map[string]any); m["status"] == matchMatched || m["candidates_truncated"] != true {
		t.Fatalf("past the bound: party_match %v", m)
	}
}

// TestSearchTitlesShowAmountsToTheCurrencysPlaces: a search result's title
// shows a document's amount exactly, padded to its currency's own decimal
// places, the places of the Currency's number_format (Frappe's yen:
// "#,###", none), not to two: a yen order of 1500 reads "JPY 1500", never
// "JPY 1500.00"; a dollar one keeps its cents.
func TestSearchTitlesShowAmountsToTheCurrencysPlaces(t *testing.T) {
	s := newSim(t, frappetest.Options{ExtraCustomers: []string{"Kyoto Kogei KK"}, ExtraCustomerCurrency: "JPY"})
	if yen := s.Data().Get("Currency", "JPY"); yen == nil || yen.Str("number_format") != "#,###" {
		t.Fatal("the seed has no yen with Frappe's number format #,###")
	}
	comp := seededWhere(t, s, "Company", func(d *frappetest.Doc) bool { return d.Str("default_currency") == "USD" })
	p := mustPropose(t, s, frappetest.RoleAdministrator, "create_sales_order", map[string]any{
		"customer": "Kyoto Kogei KK", "company": comp.Name, "transaction_date": "2026-06-15", "delivery_date": "2026-06-30",
		"items": splittableLines(t, s, [2]any{3, 500}),
	})
	out := p.mustExecute(t)
	name, _ := out["name"].(string)
	if out["currency"] != "JPY" || rat(t, out["grand_total"]).Cmp(big.NewRat(1500, 1)) != 0 {
		t.Fatalf("the ERP saved %v: want a yen order of 1500", out)
	}
	found, err := invocation{role: allCompanies, sim: s}.call(t, "search", map[string]any{"query": "Kyoto Kogei"})
	if err != nil {
		t.Fatal(err)
	}
	var title string
	for _, r := range found["results"].([]any) {
		if m := r.(map[string]any); m["id"] == "Sales Order/"+name {
			title, _ = m["title"].(string)
		}
	}
	if !strings.Contains(title, ", JPY 1500, ") {
		t.Errorf("title %q, want the amount as JPY 1500", title)
	}
	// fetch's text too.
	doc, err := invocation{role: allCompanies, sim: s}.call(t, "fetch", map[string]any{"id": "Sales Order/" + name})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := doc["text"].(string); !strings.Contains(text, "grand total: JPY 1500\n") {
		t.Errorf("fetch text %q, want grand total: JPY 1500", text)
	}

	// A dollar document keeps two places.
	usd := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Str("currency") == "USD" && d.Int("docstatus") == 1 })
	found, err = invocation{role: allCompanies, sim: s}.call(t, "search", map[string]any{"query": usd.Name})
	if err != nil {
		t.Fatal(err)
	}
	want := ", USD " + usd.Dec("grand_total").Rat().FloatString(2) + ", "
	title = ""
	for _, r := range found["results"].([]any) {
		if m := r.(map[string]any); m["id"] == "Sales Order/"+usd.Name {
			title, _ = m["title"].(string)
		}
	}
	if !strings.Contains(title, want) {
		t.Errorf("title %q, want %q", title, want)
	}
}
