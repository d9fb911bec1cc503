package acumatica

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
)

// TestSearchKeepsToTheSitesRowCap: search on a site whose row cap (the
// lower of the deployment's max_records and the site's own) is 2 asks
// Acumatica for at most 2 rows of each kind; it asked for its five a kind
// whatever the cap. The customers it finds are still the seeded ones
// whose name holds the word.
func TestSearchKeepsToTheSitesRowCap(t *testing.T) {
	const maxRecords = 2
	h := newHarness(t, harnessOptions{})
	var (
		mu   sync.Mutex
		tops = map[string][]int{}
	)
	h.erp = func(_ http.ResponseWriter, r *http.Request) bool {
		if i := strings.Index(r.URL.Path, "/entity/"); i >= 0 {
			if n, err := strconv.Atoi(r.URL.Query().Get("$top")); err == nil {
				parts := strings.Split(r.URL.Path, "/")
				mu.Lock()
				tops[parts[len(parts)-1]] = append(tops[parts[len(parts)-1]], n)
				mu.Unlock()
			}
		}
		return false
	}
	// A word in more of the seeded customers' names than the cap.
	count := map[string]int{}
	for _, c := range h.sim.Data().Records("Customer") {
		seen := map[string]bool{}
		for _, w := range strings.Fields(c.String("CustomerName")) {
			if len(w) > 2 && !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	word := ""
	for w, n := range count {
		if n > maxRecords && (word == "" || n > count[word] || n == count[word] && w < word) {
			word = w
		}
	}
	if word == "" {
		t.Fatalf("the seeded customers share no word among more than %d of them", maxRecords)
	}
	out, err := h.runCall("search", func(raw []byte) *connector.Call {
		c := h.newCall(kindFull, raw)
		c.MaxRecords = maxRecords
		return c
	}, map[string]any{"query": word})
	if err != nil {
		t.Fatal(err)
	}
	for entity, ns := range tops {
		for _, n := range ns {
			if n > maxRecords {
				t.Errorf("search on a site capped at %d rows a query asked for $top=%d of %s", maxRecords, n, entity)
			}
		}
	}
	if len(tops["Customer"]) == 0 {
		t.Fatalf("search did not list customers: %v", tops)
	}
	customers := 0
	for _, r := range out["results"].([]any) {
		if strings.HasPrefix(r.(map[string]any)["id"].(string), "Customer:") {
			customers++
		}
	}
	if customers != maxRecords {
		t.Errorf("search for %q found %d customers on a site capped at %d; the seeded data has %d with it", word, customers, maxRecords, count[word])
	}
}
