package frappe

import (
	"fmt"
	"sort"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// expectedStockRisks applies ERPNext's reorder rule to the seeded items,
// bins and warehouses of company.
func expectedStockRisks(t *testing.T, company string) (risks []string, evaluated, withoutBin, groupRules int) {
	t.Helper()
	data := testSim(t).Data()
	warehouses := map[string]bool{}
	for _, w := range data.List("Warehouse") {
		if w.Str("company") == company {
			warehouses[w.Name] = true
		}
	}
	bins := map[string]*frappetest.Doc{}
	for _, b := range data.List("Bin") {
		bins[b.Str("item_code")+"|"+b.Str("warehouse")] = b
	}
	for _, item := range data.List("Item") {
		if item.Int("disabled") == 1 {
			continue
		}
		for _, r := range item.Table("reorder_levels") {
			wh, group := r.Str("warehouse"), r.Str("warehouse_group")
			if !warehouses[wh] && !warehouses[group] {
				continue
			}
			if group != "" {
				groupRules++
				continue
			}
			level, qty := r.Dec("warehouse_reorder_level"), r.Dec("warehouse_reorder_qty")
			if level == 0 && qty == 0 {
				continue
			}
			b := bins[item.Name+"|"+wh]
			if b == nil {
				withoutBin++
				continue
			}
			evaluated++
			if b.Dec("projected_qty") <= level {
				risks = append(risks, item.Name+"|"+wh)
			}
		}
	}
	sort.Strings(risks)
	return risks, evaluated, withoutBin, groupRules
}

func TestStockRiskMatchesReorderRules(t *testing.T) {
	for _, company := range companyNames(t) {
		t.Run(company, func(t *testing.T) {
			want, evaluated, withoutBin, groupRules := expectedStockRisks(t, company)
			out := mustCall(t, noAccounting, "get_stock_risk", map[string]any{"company": company, "top": 200})
			var got []string
			for _, r := range out["risks"].([]any) {
				risk := r.(map[string]any)
				got = append(got, risk["item_code"].(string)+"|"+risk["warehouse"].(string))
				level, projected := rat(t, risk["reorder_level"]), rat(t, risk["projected_qty"])
				if projected.Cmp(level) > 0 {
					t.Fatalf("%v is above its level", risk)
				}
			}
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("risks %v, want %v", got, want)
			}
			cov := out["coverage"].(map[string]any)
			if mustInt(t, cov["rules_evaluated"]) != evaluated || mustInt(t, cov["rules_without_bin"]) != withoutBin || mustInt(t, cov["group_rules_skipped"]) != groupRules {
				t.Fatalf("coverage %v, want evaluated %d, without bin %d, group %d", cov, evaluated, withoutBin, groupRules)
			}
			if out["assessment"] != "partial" || mustInt(t, out["risk_count"]) != len(want) {
				t.Fatalf("assessment %v, risk_count %v", out["assessment"], out["risk_count"])
			}
		})
	}
}

func TestStockRiskNeverSaysAllSafe(t *testing.T) {
	// An item/warehouse filter that matches no rule gives zero risks, and
	// the result must say that this proves nothing.
	out := mustCall(t, allCompanies, "get_stock_risk", map[string]any{"company": visibleCompany(t), "item_code": "SVC-CONSULT"})
	if mustInt(t, out["risk_count"]) != 0 {
		t.Fatalf("risks for a service item: %v", out["risks"])
	}
	found := false
	for _, w := range out["warnings"].([]any) {
		if contains(w.(string), "not evidence that all stock is safe") {
			found = true
		}
	}
	if !found {
		t.Fatalf("zero risks without the not-evidence warning: %v", out["warnings"])
	}
	_, err := call(t, oneCompany, "get_stock_risk", map[string]any{"company": otherCompany(t)})
	wantCode(t, err, toolerr.PermissionDenied)
}
