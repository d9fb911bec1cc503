package frappe

import (
	"encoding/json"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestReportsRunOnASiteThatPreparesThem: Frappe turns any report into a
// prepared report once a run takes over 15 seconds (enable_prepared_report),
// as a large site's General Ledger or Trial Balance does, and an
// administrator may tick Prepared Report on any. query_report.run then
// queues it and answers with no rows unless ignore_prepared_report is
// sent. The report tools must still answer, with the same figures as on a
// site where the reports run directly.
func TestReportsRunOnASiteThatPreparesThem(t *testing.T) {
	s := frappetest.NewServer(frappetest.Options{PreparedReports: []string{
		reportGeneralLedger, reportTrialBalance, reportProfitAndLoss, reportReceivable, reportReceivableSummary,
		reportPayable, reportPayableSummary, reportStockLedger, reportBankReconciliation,
	}})
	t.Cleanup(s.Close)
	company := visibleCompany(t)
	prepared := invocation{role: allCompanies, sim: s}
	direct := invocation{role: allCompanies}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"get_general_ledger", map[string]any{"company": company, "from_date": "2025-04-01", "to_date": "2025-06-30"}},
		{"get_trial_balance", map[string]any{"company": company, "fiscal_year": "2025"}},
		{"get_profit_and_loss", map[string]any{"company": company, "period": "current_fiscal_year", "as_of_date": "2025-08-01"}},
		{"get_stock_ledger", map[string]any{"company": company, "from_date": "2025-04-01", "to_date": "2025-06-30", "limit": 5}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			got, err := prepared.call(t, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("%s on a site that prepares it: %v", tc.tool, err)
			}
			want, err := direct.call(t, tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
				t.Errorf("%s differs from the direct run:\n%s\nwant\n%s", tc.tool, g, w)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
