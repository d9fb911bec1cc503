package connector

import (
	"slices"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/redact"
)

// ApprovedColumn gives the cells of one column of one table as approved,
// row by row: "" where the table had no such row or showed the cell
// redacted, and for a call that is not an approved write.
func TestApprovedColumn(t *testing.T) {
	if got := (&Call{}).ApprovedColumn("Lines", "Unit", 2); !slices.Equal(got, []string{"", ""}) {
		t.Errorf("not approved: %q", got)
	}
	call := &Call{Approved: &Approved{Preview: Preview{Tables: []PreviewTable{
		{Title: "Totals", Columns: []string{"Unit"}, Rows: [][]string{{"wrong table"}}},
		{Title: "Lines", Columns: []string{"Item", "Qty", "Unit"}, Rows: [][]string{
			{"A", "2", "PCS"}, {"B", "1", redact.Placeholder}, {"C", "5"},
		}},
	}}}}
	if got, want := call.ApprovedColumn("Lines", "Unit", 4), []string{"PCS", "", "", ""}; !slices.Equal(got, want) {
		t.Errorf("units %q, want %q", got, want)
	}
	if got := call.ApprovedColumn("Lines", "Rate", 1); !slices.Equal(got, []string{""}) {
		t.Errorf("a column the table lacks: %q", got)
	}
}
