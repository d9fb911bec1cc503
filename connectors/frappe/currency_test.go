package frappe

import (
	"fmt"
	"strings"
	"testing"
)

// A report's rows come from the ERP, as many as fit in an answer (some
// hundred thousand): rowCurrency compared each row's currency with every
// other one seen (rows × currencies, minutes of CPU for one call when
// each row names its own), then listed them all in one warning. The
// warning names a few and says there are more; rows in two currencies
// still name both.
func TestRowCurrencyBoundsItsWork(t *testing.T) {
	const n = 20000
	rows := make([]map[string]any, n)
	for i := range rows {
		rows[i] = map[string]any{"currency": fmt.Sprintf("C%05d", i)}
	}
	var warnings []string
	if got := rowCurrency(rows, "EUR", &warnings); got != "" {
		t.Errorf("currency = %q, want none", got)
	}
	if len(warnings) != 1 || len(warnings[0]) > 400 {
		t.Fatalf("%d warnings, the first %d bytes long", len(warnings), len(warnings[0]))
	}
	if !strings.Contains(warnings[0], "C00000, C00001") || !strings.Contains(warnings[0], "more") {
		t.Errorf("warning = %q", warnings[0])
	}
	warnings = nil
	two := []map[string]any{{"currency": "USD"}, {"currency": "EUR"}, {"currency": "USD"}}
	if got := rowCurrency(two, "EUR", &warnings); got != "" || len(warnings) != 1 ||
		warnings[0] != "Rows are in more than one currency (USD, EUR); totals add them up as the ERP reports them." {
		t.Errorf("two currencies: %q, %q", got, warnings)
	}
}
