package frappe

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// pageSizes records the rows each list request to the ERP asked for
// (limit_page_length), by DocType.
type pageSizes struct {
	next http.RoundTripper
	mu   sync.Mutex
	asks map[string][]int
}

func (p *pageSizes) RoundTrip(r *http.Request) (*http.Response, error) {
	if doctype, ok := strings.CutPrefix(r.URL.Path, "/api/resource/"); ok {
		if n, err := strconv.Atoi(r.URL.Query().Get("limit_page_length")); err == nil {
			p.mu.Lock()
			p.asks[doctype] = append(p.asks[doctype], n)
			p.mu.Unlock()
		}
	}
	return p.next.RoundTrip(r)
}

// callCapped runs tool as allCompanies on the shared simulator for a site
// whose row cap (connector.Call.MaxRecords: the lower of the deployment's
// and the site's own max_records) is maxRecords, and returns its result
// and the page sizes it asked the ERP for.
func callCapped(t *testing.T, maxRecords int, name string, args map[string]any) (map[string]any, map[string][]int) {
	t.Helper()
	out, asks, err := callCappedErr(t, maxRecords, name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, asks
}

// callCappedErr is callCapped that returns the tool's error too.
func callCappedErr(t *testing.T, maxRecords int, name string, args map[string]any) (map[string]any, map[string][]int, error) {
	t.Helper()
	return invocation{role: allCompanies, maxRecords: maxRecords}.callRecorded(t, name, args)
}

// callRecorded is call that also returns the page sizes the tool asked
// the ERP for.
func (inv invocation) callRecorded(t *testing.T, name string, args map[string]any) (map[string]any, map[string][]int, error) {
	t.Helper()
	tool := toolByName(t, name)
	raw, err := validArgs(t, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	c := inv.newCall(t, raw)
	rec := &pageSizes{next: c.HTTP.Transport, asks: map[string][]int{}}
	c.HTTP = &http.Client{Transport: rec, CheckRedirect: c.HTTP.CheckRedirect, Jar: c.HTTP.Jar}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := tool.Handler(ctx, c)
	if err != nil {
		return nil, rec.asks, err
	}
	m, _ := checkResult(t, tool, out)
	return m, rec.asks, nil
}

// overCap lists the list requests that asked the ERP for more rows than
// the site's cap allows: cap, and the one row more a page asks for to
// learn whether rows follow (as every list tool's page does).
func overCap(asks map[string][]int, maxRecords int) []string {
	var over []string
	for doctype, sizes := range asks {
		for _, n := range sizes {
			if n > maxRecords+1 {
				over = append(over, doctype+":"+strconv.Itoa(n))
			}
		}
	}
	slices.Sort(over)
	return over
}

// TestSearchKeepsToTheSitesRowCap: a site whose owner lowered its
// max_records to 10 has search ask its ERP for at most that many rows a
// query; search read its candidates in pages of 200 whatever the cap.
func TestSearchKeepsToTheSitesRowCap(t *testing.T) {
	const maxRecords = 10
	out, asks := callCapped(t, maxRecords, "search", map[string]any{"query": "berliner"})
	if over := overCap(asks, maxRecords); len(over) > 0 {
		t.Errorf("search on a site capped at %d rows a query asked the ERP for: %v", maxRecords, over)
	}
	if len(asks["Sales Invoice"]) == 0 {
		t.Fatalf("search read no Sales Invoice: %v", asks)
	}
	// What it finds are Berliner's most recently modified invoices (seeded
	// data); fewer rows read a query may find fewer, and then the answer
	// says Sales Invoices were searched only in part.
	var want []*frappetest.Doc
	for _, d := range testSim(t).Data().List("Sales Invoice") {
		if strings.Contains(strings.ToLower(d.Str("customer_name")), "berliner") {
			want = append(want, d)
		}
	}
	sort.Slice(want, func(i, j int) bool {
		if a, b := want[i].Str("modified"), want[j].Str("modified"); a != b {
			return a > b
		}
		return want[i].Name > want[j].Name
	})
	var got []string
	for _, id := range resultIDs(out) {
		if strings.HasPrefix(id, "Sales Invoice/") {
			got = append(got, id)
		}
	}
	if len(got) == 0 || len(want) < len(got) {
		t.Fatalf("search found Berliner's invoices %v; the seeded data has %d", got, len(want))
	}
	for i, id := range got {
		if id != "Sales Invoice/"+want[i].Name {
			t.Errorf("search found %v, want Berliner's most recent invoices in order, starting %s", got, want[i].Name)
			break
		}
	}
	if len(got) < perSourceResults {
		partial := false
		for _, ns := range out["not_searched"].([]any) {
			ns := ns.(map[string]any)
			partial = partial || ns["doctype"] == "Sales Invoice" && ns["partial"] == true
		}
		if !partial || out["complete"] != false {
			t.Errorf("search found %d of Berliner's invoices, fewer than %d, without saying Sales Invoices were searched in part: complete %v, not_searched %v",
				len(got), perSourceResults, out["complete"], out["not_searched"])
		}
	}
}

// TestSpokenNamesKeepToTheSitesRowCap: a spoken name (customer_query) on
// a site capped at 10 rows a query asks the ERP for at most that many a
// page; its candidates were read in pages of 200.
func TestSpokenNamesKeepToTheSitesRowCap(t *testing.T) {
	const maxRecords = 10
	out, asks := callCapped(t, maxRecords, "list_sales_invoices", map[string]any{"customer_query": "acme widgets", "limit": 1})
	if over := overCap(asks, maxRecords); len(over) > 0 {
		t.Errorf("a spoken name on a site capped at %d rows a query asked the ERP for: %v", maxRecords, over)
	}
	m := out["party_match"].(map[string]any)
	var ids []string
	for _, c := range m["candidates"].([]any) {
		ids = append(ids, c.(map[string]any)["id"].(string))
	}
	if m["status"] != matchAmbiguous || !slices.Equal(ids, []string{"Acme Widgets Inc", "Acme Widgets LLC"}) {
		t.Errorf("party_match %v, want the seeded Acme Widgets Inc and LLC as candidates", m)
	}
}
