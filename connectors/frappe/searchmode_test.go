package frappe

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Directory searches and spoken names, as NexWave MCP's directory tools
// had them: list_items and list_companies compare a search no record
// contains as a spoken name too (name_match), and search_mode picks the
// literal search alone ("literal"), the spoken-name comparison alone
// ("name"), or the literal search falling back to it ("auto", the
// default). Expected records are the simulator's seeded items (HW-1001
// "Steel Bracket 50mm", HW-1003 "Galvanised Bolt M10 (box of 50)", HW-1099
// "Discontinued Widget", disabled) and companies.

// nameMatchOf returns a directory answer's match (under key), its
// candidate ids sorted, and the ids of its page sorted.
func nameMatchOf(t *testing.T, out map[string]any, key string) (map[string]any, []string, []string) {
	t.Helper()
	m, ok := out[key].(map[string]any)
	if !ok {
		t.Fatalf("no %s in %v", key, out)
	}
	var cands []string
	for _, c := range m["candidates"].([]any) {
		cands = append(cands, c.(map[string]any)["id"].(string))
	}
	sort.Strings(cands)
	var page []map[string]any
	for _, r := range out["data"].([]any) {
		page = append(page, r.(map[string]any))
	}
	return m, cands, rowNames(page)
}

func TestItemSearchFallsBackToSpokenName(t *testing.T) {
	for _, tc := range []struct {
		query, status string
		candidates    []string
		page          []string
	}{
		{query: "steel bracket 50 mm", status: matchMatched, candidates: []string{"HW-1001"}, page: []string{"HW-1001"}},
		{query: "galvanised bolt m10 box of 50", status: matchMatched, candidates: []string{"HW-1003"}, page: []string{"HW-1003"}},
		{query: "hinge heavy duty", status: matchAmbiguous, candidates: []string{"HW-1004"}},
		// Disabled: listed only with include_disabled.
		{query: "discontinued widget", status: matchMatched, candidates: []string{"HW-1099"}},
		{query: "titanium spanner", status: matchNotFound},
	} {
		t.Run(tc.query, func(t *testing.T) {
			out := mustCall(t, allCompanies, "list_items", map[string]any{"search": tc.query})
			m, cands, page := nameMatchOf(t, out, "name_match")
			if m["status"] != tc.status || m["party_type"] != "Item" {
				t.Fatalf("name_match %v, want status %s", m, tc.status)
			}
			if tc.candidates != nil && !slices.Equal(cands, tc.candidates) {
				t.Fatalf("candidates %v, want %v", cands, tc.candidates)
			}
			if !slices.Equal(page, tc.page) {
				t.Fatalf("page %v, want %v", page, tc.page)
			}
			if msg := m["message"].(string); strings.Contains(msg, "customer") || strings.Contains(msg, "party") {
				t.Errorf("message: %s", msg)
			}
		})
	}
	// "Discontinued Widget" is contained literally once disabled items
	// are listed: a plain page, no name_match.
	out := mustCall(t, allCompanies, "list_items", map[string]any{"search": "discontinued widget", "include_disabled": true})
	if _, ok := out["name_match"]; ok || len(out["data"].([]any)) != 1 {
		t.Fatalf("include_disabled: %v", out)
	}
}

func TestItemSearchLiteralHitHasNoNameMatch(t *testing.T) {
	out := mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket"})
	if _, ok := out["name_match"]; ok {
		t.Fatalf("literal hit: name_match %v", out["name_match"])
	}
	var page []map[string]any
	for _, r := range out["data"].([]any) {
		page = append(page, r.(map[string]any))
	}
	if got := rowNames(page); !slices.Equal(got, []string{"HW-1001", "HW-1002"}) {
		t.Fatalf("page %v", got)
	}
	// With an explicit filter a literal hit is answered the same way.
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket", "brand": "Ironclad"})
	if _, ok := out["name_match"]; ok || len(out["data"].([]any)) != 2 {
		t.Fatalf("with brand: %v", out)
	}
}

func TestCompanySearchFallsBackToSpokenName(t *testing.T) {
	out := mustCall(t, allCompanies, "list_companies", map[string]any{"search": "demo holdings nz limited"})
	m, cands, page := nameMatchOf(t, out, "name_match")
	if m["status"] != matchMatched || m["party_type"] != "Company" || !slices.Equal(cands, []string{"Demo Holdings NZ Ltd"}) || !slices.Equal(page, cands) {
		t.Fatalf("name_match %v, page %v", m, page)
	}
	// The abbreviation is found literally.
	out = mustCall(t, allCompanies, "list_companies", map[string]any{"search": "dtau"})
	if _, ok := out["name_match"]; ok || len(out["data"].([]any)) != 1 || out["data"].([]any)[0].(map[string]any)["name"] != "Demo Trading AU Pty Ltd" {
		t.Fatalf("abbr search: %v", out)
	}
	// A company the user may not see is neither listed nor a candidate.
	out = mustCall(t, oneCompany, "list_companies", map[string]any{"search": "demo trading au limited"})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchNotFound || len(page) != 0 || slices.Contains(cands, "Demo Trading AU Pty Ltd") {
		t.Fatalf("one-company: name_match %v, page %v", m, page)
	}
}

func TestSearchModes(t *testing.T) {
	// literal: no fallback.
	for tool, search := range map[string]string{
		"list_customers": "o brien and sons",
		"list_items":     "steel bracket 50 mm",
		"list_companies": "demo holdings nz limited",
	} {
		out := mustCall(t, allCompanies, tool, map[string]any{"search": search, "search_mode": "literal"})
		_, party := out["party_match"]
		_, name := out["name_match"]
		if party || name || len(out["data"].([]any)) != 0 {
			t.Errorf("%s literal %q: %v", tool, search, out)
		}
	}
	// name: compared as a spoken name even where a record contains it.
	out := mustCall(t, allCompanies, "list_customers", map[string]any{"search": "Acme Widgets", "search_mode": "name"})
	m, cands, page := nameMatchOf(t, out, "party_match")
	if m["status"] != matchAmbiguous || !slices.Equal(cands, []string{"Acme Widgets Inc", "Acme Widgets LLC"}) || len(page) != 0 {
		t.Fatalf("list_customers name: %v, page %v", m, page)
	}
	out = mustCall(t, allCompanies, "list_customers", map[string]any{"search": "Acme Widgets"})
	if _, ok := out["party_match"]; ok || len(out["data"].([]any)) != 2 {
		t.Fatalf("list_customers auto: %v", out)
	}
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket 50mm", "search_mode": "name"})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchMatched || m["method"] != "exact" || !slices.Equal(cands, []string{"HW-1001"}) || !slices.Equal(page, cands) {
		t.Fatalf("list_items name: %v, page %v", m, page)
	}
	out = mustCall(t, allCompanies, "list_companies", map[string]any{"search": "demo", "search_mode": "name"})
	m, cands, page = nameMatchOf(t, out, "name_match")
	if m["status"] != matchAmbiguous || len(cands) != 3 || len(page) != 0 {
		t.Fatalf("list_companies name: %v, page %v", m, page)
	}
	out = mustCall(t, allCompanies, "list_suppliers", map[string]any{"search": "nobody at all", "search_mode": "name"})
	if m, _, page := nameMatchOf(t, out, "party_match"); m["status"] != matchNotFound || len(page) != 0 {
		t.Fatalf("list_suppliers name: %v", out)
	}
	out = mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket", "search_mode": "auto"})
	if _, ok := out["name_match"]; ok || len(out["data"].([]any)) != 2 {
		t.Fatalf("list_items auto: %v", out)
	}
}

func TestSearchModeRefusals(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_items", map[string]any{"search_mode": "name"}, "search"},
		{"list_items", map[string]any{"search": "steel", "search_mode": "name", "summary": "count"}, "summary"},
		{"list_items", map[string]any{"search": "steel", "search_mode": "name", "offset": 20}, "offset"},
	} {
		_, err := call(t, allCompanies, tc.tool, tc.args)
		te := wantCode(t, err, toolerr.InvalidArgument)
		if !strings.Contains(te.Message, tc.want) || !strings.Contains(te.Message, "search_mode") {
			t.Errorf("%s %v: %s", tc.tool, tc.args, te.Message)
		}
	}
	// The schema admits the three modes, and the argument only on the
	// directories that compare spoken names.
	_, err := call(t, allCompanies, "list_items", map[string]any{"search": "steel", "search_mode": "fuzzy"})
	wantCode(t, err, toolerr.InvalidArgument)
	_, err = call(t, allCompanies, "list_warehouses", map[string]any{"company": "Demo Holdings NZ Ltd", "search": "stores", "search_mode": "literal"})
	wantCode(t, err, toolerr.InvalidArgument)
	// A literal count is still allowed.
	out := mustCall(t, allCompanies, "list_items", map[string]any{"search": "steel bracket", "search_mode": "literal", "summary": "count"})
	if n := out["summary"].(map[string]any)["count"]; n == nil || n.(interface{ String() string }).String() != "2" {
		t.Fatalf("literal count: %v", out)
	}
}
