package frappe

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Receivables and payables share ERPNext's ReceivablePayableReport engine:
// the detailed report lists open documents (vouchers) with their ageing,
// the summary report one row per party. ledgerSide names one side's
// reports and party, and the helpers here run them with the same filters
// and add up their rows exactly.

// ledgerSide is receivables or payables.
type ledgerSide struct {
	detailReport, summaryReport string
	party                       partyKind
	// noun is what a balance is called ("receivable").
	noun string
	// ageingBases are the ageing_based_on options.
	ageingBases []string
}

var (
	receivableSide = ledgerSide{detailReport: reportReceivable, summaryReport: reportReceivableSummary, party: customerParty, noun: "receivable",
		ageingBases: []string{"Due Date", "Posting Date"}}
	payableSide = ledgerSide{detailReport: reportPayable, summaryReport: reportPayableSummary, party: supplierParty, noun: "payable",
		ageingBases: []string{"Due Date", "Posting Date", "Supplier Invoice Date"}}
)

// ageingBuckets are the ageing columns, oldest last.
var ageingBuckets = []string{"range1", "range2", "range3", "range4", "range5"}

// ageingAmountFields are the amount columns totalled over the detail rows.
var ageingAmountFields = []string{"invoiced", "paid", "credit_note", "outstanding"}

// ageingArgs are the arguments every receivable/payable tool shares.
type ageingArgs struct {
	Company       string `json:"company"`
	ReportDate    string `json:"report_date"`
	AgeingBasedOn string `json:"ageing_based_on"`
	AgeingRanges  []int  `json:"ageing_ranges"`
}

func (s ledgerSide) ageingProps() []schema.Property {
	return []schema.Property{
		companyProp("The company whose balances to read."),
		schema.Prop("report_date", schema.Date("The date balances are stated at (YYYY-MM-DD); for current balances, the user's current local date.")).Required(),
		schema.Prop("ageing_based_on", schema.String("Age documents from their due date or their posting date.").OneOf(s.ageingBases...).WithDefault("Due Date")),
		schema.Prop("ageing_ranges", withDesc(schema.Array(schema.Integer("").Min(1).Max(10000), "").Count(4, 4), "Upper bounds in days of the first four ageing buckets, ascending; the fifth bucket is everything older. Default [30, 60, 90, 120].")),
	}
}

// ageingFilters builds the filters both reports of a side take.
func (s ledgerSide) ageingFilters(company string, a ageingArgs, partyID string) (map[string]any, error) {
	if _, err := parseDate("report_date", a.ReportDate); err != nil {
		return nil, err
	}
	ranges := a.AgeingRanges
	if len(ranges) == 0 {
		ranges = []int{30, 60, 90, 120}
	}
	for i := 1; i < len(ranges); i++ {
		if ranges[i] <= ranges[i-1] {
			return nil, toolerr.New(toolerr.InvalidArgument, "ageing_ranges must be ascending, e.g. [30, 60, 90, 120]")
		}
	}
	basis := a.AgeingBasedOn
	if basis == "" {
		basis = "Due Date"
	}
	text := make([]string, len(ranges))
	for i, r := range ranges {
		text[i] = strconv.Itoa(r)
	}
	f := map[string]any{
		"company":               company,
		"report_date":           a.ReportDate,
		"ageing_based_on":       basis,
		"calculate_ageing_with": "Report Date",
		// ERPNext 15.1xx reads one "range" string; earlier v15 builds read
		// range1..range4. Both are sent so either build ages the same way.
		"range":  strings.Join(text, ", "),
		"range1": ranges[0], "range2": ranges[1], "range3": ranges[2], "range4": ranges[3],
		"party_type": s.party.Doctype,
	}
	if partyID != "" {
		f["party"] = []string{partyID}
	}
	return f, nil
}

// ageingBucket is one ageing column's total.
type ageingBucket struct {
	Bucket string      `json:"bucket"`
	Label  string      `json:"label"`
	Amount json.Number `json:"amount"`
}

func ageingSchema() *schema.Schema {
	return schema.Array(schema.Object(
		schema.Prop("bucket", schema.String("range1 (youngest) to range5 (oldest), the column keys of the report rows, then not_due: balances due after report_date, which the ERP leaves out of every range.")).Required(),
		schema.Prop("label", schema.String("Days, as the ERP labels the bucket (e.g. 0-30, 121-Above).")).Required(),
		schema.Prop("amount", money("Exact sum of the bucket over every row.")).Required(),
	), "Outstanding amounts by age; the buckets add up to the outstanding total.")
}

// notDueBucket is the part of the outstanding balance ERPNext leaves out
// of every ageing column: documents whose ageing date (usually the due
// date) is after the report date.
const notDueBucket = "not_due"

// ageingTotals sums the ageing buckets of rows, labels them, and adds the
// not-yet-due remainder, so the buckets always add up to the outstanding
// total.
func ageingTotals(d *reportData, rows []map[string]any) ([]ageingBucket, error) {
	present := d.presentColumns(ageingBuckets...)
	sums, err := sumColumns(rows, append(slices.Clone(present), "outstanding"))
	if err != nil {
		return nil, err
	}
	out := []ageingBucket{}
	remainder, _ := decimalText(sums["outstanding"])
	for _, b := range present {
		label := b
		for _, c := range d.columns {
			if c.Fieldname == b {
				label = c.Label
			}
		}
		out = append(out, ageingBucket{Bucket: b, Label: label, Amount: sums[b]})
		r, _ := decimalText(sums[b])
		remainder.Sub(remainder, r)
	}
	if len(present) > 0 {
		out = append(out, ageingBucket{Bucket: notDueBucket, Label: "Not due yet", Amount: decimalNumber(remainder)})
	}
	return out, nil
}

// rowCurrency returns the single currency of rows, or "" and a warning
// when they differ. The warning names the first few (listedCurrencies):
// the rows are the ERP's, as many as fit in an answer, and comparing each
// with every currency seen would cost rows × currencies.
func rowCurrency(rows []map[string]any, fallback string, warnings *[]string) string {
	var seen []string
	more := false
	for _, r := range rows {
		c := str(r["currency"])
		if c == "" || slices.Contains(seen, c) {
			continue
		}
		if len(seen) == listedCurrencies {
			more = true
			break
		}
		seen = append(seen, c)
	}
	switch len(seen) {
	case 0:
		return fallback
	case 1:
		return seen[0]
	}
	list := strings.Join(seen, ", ")
	if more {
		list += " and more"
	}
	*warnings = append(*warnings, fmt.Sprintf("Rows are in more than one currency (%s); totals add them up as the ERP reports them.", list))
	return ""
}

// listedCurrencies is how many currencies rowCurrency's warning names.
const listedCurrencies = 10

// overdueResult is the overdue part of open balances.
type overdueResult struct {
	// amount is the sum of positive balances due strictly before the
	// report date; nil unless complete.
	amount *decimalSum
	// complete is false when a positive balance had no usable date.
	complete bool
	// byParty holds each party's overdue amount.
	byParty map[string]*decimalSum
	reason  string
}

// overdueOf adds up the positive outstanding of rows due strictly before
// reportDate, falling back to the posting date when a row has no due date
// (as the standard report does). Unallocated credits (negative balances)
// are not deducted: they are not yet applied to any document.
func overdueOf(rows []map[string]any, reportDate string) overdueResult {
	res := overdueResult{amount: &decimalSum{}, complete: true, byParty: map[string]*decimalSum{}}
	for _, r := range rows {
		out, ok := decimalText(r["outstanding"])
		if !ok {
			res.complete, res.reason = false, "a document's outstanding amount is not a number"
			continue
		}
		if out.Sign() <= 0 {
			continue
		}
		due := str(r["due_date"])
		if _, err := parseDate("due_date", due); err != nil {
			due = str(r["posting_date"])
			if _, err := parseDate("posting_date", due); err != nil {
				res.complete = false
				res.reason = fmt.Sprintf("document %s has a balance but neither a due date nor a posting date", str(r["voucher_no"]))
				continue
			}
		}
		if due < reportDate {
			res.amount.addRat(out)
			p := str(r["party"])
			if res.byParty[p] == nil {
				res.byParty[p] = &decimalSum{}
			}
			res.byParty[p].addRat(out)
		}
	}
	return res
}

// partyBalances sums the outstanding of detail rows per party.
func partyBalances(rows []map[string]any) map[string]*decimalSum {
	out := map[string]*decimalSum{}
	for _, r := range rows {
		p := str(r["party"])
		if out[p] == nil {
			out[p] = &decimalSum{}
		}
		out[p].add(r["outstanding"])
	}
	return out
}

// reconciles reports whether two amounts agree to within half a cent. The
// ERP computes both report levels in floating point, so exact equality of
// their texts is not expected.
func reconciles(a, b *big.Rat) bool {
	d := new(big.Rat).Sub(a, b)
	d.Abs(d)
	return d.Cmp(big.NewRat(1, 200)) < 0
}

// runDetail runs the detailed report of a side for a company (and party).
func (s ledgerSide) runDetail(ctx context.Context, c *client, company string, a ageingArgs, partyID string) (*reportData, []map[string]any, error) {
	f, err := s.ageingFilters(company, a, partyID)
	if err != nil {
		return nil, nil, err
	}
	d, err := c.runReport(ctx, s.detailReport, f)
	if err != nil {
		return nil, nil, err
	}
	return d, voucherRows(d), nil
}

// voucherRows are the document rows of a detailed report, without subtotal
// and total rows.
func voucherRows(d *reportData) []map[string]any {
	var out []map[string]any
	for _, r := range d.rows {
		if str(r["voucher_no"]) == "" || isTrue(r["bold"]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// partyRows are the party rows of a summary report.
func partyRows(d *reportData) []map[string]any {
	var out []map[string]any
	for _, r := range d.rows {
		p := str(r["party"])
		if p == "" || isTrue(r["bold"]) {
			continue
		}
		if _, quoted := quotedLabel(p); quoted || p == "Total" {
			continue
		}
		out = append(out, r)
	}
	return out
}

// sideCompany resolves and checks the company of a receivable/payable call.
func sideCompany(ctx context.Context, call *connector.Call, c *client, arg string) (companyInfo, error) {
	name, err := requireCompany(call, arg, "balances are kept per company, in its currency")
	if err != nil {
		return companyInfo{}, err
	}
	return c.company(ctx, name)
}
