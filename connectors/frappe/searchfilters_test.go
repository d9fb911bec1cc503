package frappe

import (
	"slices"
	"strings"
	"testing"
)

// NexWave MCP's directory tools keep explicit filters when a search no
// record contains literally is compared as a spoken name ("Fallbacks
// preserve explicit filters and permissions"): the filters narrow the
// records compared, so a filter can settle which of two similar names is
// meant, and a filtered search is never a bare empty page that reads as
// "no such record". Expected records are the simulator's seeded
// customers ("Southern Cross Plumbing Ltd" in territory New Zealand,
// "Southern Cross Plumbing Pty Ltd" in Australia) and items (HW-1001
// "Steel Bracket 50mm" and HW-1002 "Steel Bracket 100mm" of brand
// Ironclad, HW-1007 "Steel Tool Box" of brand Lockwell).

func TestDirectoryNameFallbackKeepsFilters(t *testing.T) {
	const spoken = "southern cross plumbing limited"
	// Without a filter the spoken name fits both customers.
	out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": spoken})
	m, cands, page := nameMatchOf(t, out, "party_match")
	both := []string{"Southern Cross Plumbing Ltd", "Southern Cross Plumbing Pty Ltd"}
	if m["status"] != matchAmbiguous || !slices.Equal(cands, both) || len(page) != 0 {
		t.Fatalf("no filter: %v, page %v", m, page)
	}
	// The territory settles it: only the New Zealand customer is compared.
	for _, mode := range []string{searchAuto, searchName} {
		out = mustCall(t, allCompanies, "list_customers", map[string]any{"search": spoken, "territory": "New Zealand", "search_mode": mode})
		m, cands, page = nameMatchOf(t, out, "party_match")
		if m["status"] != matchMatched || m["id"] != "Southern Cross Plumbing Ltd" || !slices.Equal(page, cands) || !slices.Equal(page, []string{"Southern Cross Plumbing Ltd"}) {
			t.Fatalf("%s with territory: %v, page %v", mode, m, page)
		}
	}
	// A filter no candidate meets: not found, and the message says the
	// filters were kept.
	out = mustCall(t, allCompanies, "list_customers", map[string]any{"search": spoken, "territory": "United States"})
	m, cands, page = nameMatchOf(t, out, "party_match")
	if m["status"] != matchNotFound || len(cands) != 0 || len(page) != 0 || !strings.Contains(m["message"].(string), "territory") {
		t.Fatalf("territory United States: %v, candidates %v, page %v", m, cands, page)
	}

	// Items: the exact name with its own group is listed.
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket 50 mm", "item_group": "Products"})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchMatched || !slices.Equal(cands, []string{"HW-1001"}) || !slices.Equal(page, cands) {
		t.Fatalf("item_group Products: %v, page %v", m, page)
	}
	// Partial candidates are only those of the brand asked for.
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel", "brand": "Ironclad", "search_mode": searchName})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchAmbiguous || !slices.Equal(cands, []string{"HW-1001", "HW-1002"}) || len(page) != 0 {
		t.Fatalf("brand Ironclad: %v, page %v", m, page)
	}
	// Another brand's item is not offered.
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket 50 mm", "brand": "Voltmax"})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchNotFound || slices.Contains(cands, "HW-1001") || len(page) != 0 || !strings.Contains(m["message"].(string), "brand") {
		t.Fatalf("brand Voltmax: %v, page %v", m, page)
	}
}
