package frappe

import (
	"context"
	"fmt"
	"time"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// A date range is given in one of two forms, never both: explicit
// from_date/to_date, or a period preset with as_of_date, the user's current
// local date. erpgate does not guess "today": the server's clock and time
// zone are not the user's, and "last month" asked just after midnight in
// Auckland is a different month in UTC.

const (
	periodCurrentFiscalYear = "current_fiscal_year"
	periodLastMonth         = "last_month"
	periodLast90Days        = "last_90_days"
	dateLayout              = "2006-01-02"
	// maxDetailDays bounds the range of detailed reports (ledgers, stock
	// moves, sales summary): a year plus a leap day.
	maxDetailDays = 366
)

var periods = []string{periodCurrentFiscalYear, periodLastMonth, periodLast90Days}

// dateArgs are the date-range arguments.
type dateArgs struct {
	FromDate string `json:"from_date"`
	ToDate   string `json:"to_date"`
	Period   string `json:"period"`
	AsOfDate string `json:"as_of_date"`
}

// dateRangeProps returns the four date-range arguments. what names the
// date the range applies to ("posting date").
func dateRangeProps(what string) []schema.Property {
	return []schema.Property{
		schema.Prop("from_date", schema.Date("First "+what+" to include (YYYY-MM-DD). Use with to_date, or use period instead.")),
		schema.Prop("to_date", schema.Date("Last "+what+" to include (YYYY-MM-DD).")),
		schema.Prop("period", schema.String("A preset range instead of from_date/to_date; needs as_of_date. current_fiscal_year is the company's fiscal year containing as_of_date; last_month is the calendar month before as_of_date's month; last_90_days is the 90 days ending on as_of_date.").OneOf(periods...)),
		schema.Prop("as_of_date", schema.Date("The user's current local date (YYYY-MM-DD), which period is counted from.")),
	}
}

// dateRange is a resolved, inclusive range of calendar dates.
type dateRange struct {
	From string `json:"from_date"`
	To   string `json:"to_date"`
	// Period and AsOfDate echo a preset that was resolved.
	Period   string `json:"period,omitempty"`
	AsOfDate string `json:"as_of_date,omitempty"`
	// FiscalYear names the fiscal year a current_fiscal_year period
	// resolved to.
	FiscalYear string `json:"fiscal_year,omitempty"`
}

func dateRangeSchema() *schema.Schema {
	return schema.Object(
		schema.Prop("from_date", schema.String("First date included.")).Required(),
		schema.Prop("to_date", schema.String("Last date included.")).Required(),
		schema.Prop("period", schema.String("The preset that was resolved, if any.")),
		schema.Prop("as_of_date", schema.String("The as_of_date the preset was counted from.")),
		schema.Prop("fiscal_year", schema.String("The fiscal year current_fiscal_year resolved to.")),
	)
}

// days is the number of calendar days in the range.
func (r dateRange) days() int {
	from, _ := time.Parse(dateLayout, r.From)
	to, _ := time.Parse(dateLayout, r.To)
	return int(to.Sub(from).Hours()/24) + 1
}

// rangeRules say what a tool needs from a date range.
type rangeRules struct {
	// required makes a range mandatory (reports); lists accept none.
	required bool
	// maxDays bounds the range; 0 means unbounded.
	maxDays int
	// company is the company current_fiscal_year is resolved for.
	company string
}

// parseDate checks a calendar date; the schema has checked only its shape.
func parseDate(field, s string) (time.Time, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, toolerr.New(toolerr.InvalidArgument, "%s %q is not a calendar date (YYYY-MM-DD)", field, s)
	}
	return t, nil
}

// resolveRange turns date arguments into a range. It returns nil when no
// range was given and none is required.
func resolveRange(ctx context.Context, c *client, a dateArgs, rules rangeRules) (*dateRange, error) {
	explicit := a.FromDate != "" || a.ToDate != ""
	switch {
	case a.Period != "" && explicit:
		return nil, toolerr.New(toolerr.InvalidArgument, "use either from_date/to_date or period with as_of_date, not both")
	case a.Period == "" && a.AsOfDate != "":
		return nil, toolerr.New(toolerr.InvalidArgument, "as_of_date goes with period: add period (%s) or use from_date/to_date", joinOr(periods))
	case a.Period != "" && a.AsOfDate == "":
		return nil, toolerr.New(toolerr.InvalidArgument, "period %s needs as_of_date: add the user's current local date (YYYY-MM-DD)", a.Period)
	case a.Period == "" && !explicit:
		if rules.required {
			return nil, toolerr.New(toolerr.InvalidArgument, "add a date range: from_date and to_date, or period with as_of_date")
		}
		return nil, nil
	}
	var r dateRange
	if a.Period != "" {
		asOf, err := parseDate("as_of_date", a.AsOfDate)
		if err != nil {
			return nil, err
		}
		r.Period, r.AsOfDate = a.Period, a.AsOfDate
		switch a.Period {
		case periodLastMonth:
			first := time.Date(asOf.Year(), asOf.Month(), 1, 0, 0, 0, 0, time.UTC)
			r.From = first.AddDate(0, -1, 0).Format(dateLayout)
			r.To = first.AddDate(0, 0, -1).Format(dateLayout)
		case periodLast90Days:
			r.From = asOf.AddDate(0, 0, -89).Format(dateLayout)
			r.To = a.AsOfDate
		case periodCurrentFiscalYear:
			if rules.company == "" {
				return nil, toolerr.New(toolerr.InvalidArgument, "period current_fiscal_year is resolved per company: add company (see list_companies)")
			}
			fy, err := c.fiscalYearFor(ctx, rules.company, a.AsOfDate)
			if err != nil {
				return nil, err
			}
			r.From, r.To, r.FiscalYear = fy.Start, fy.End, fy.Name
		default:
			return nil, toolerr.New(toolerr.InvalidArgument, "period must be one of %s", joinOr(periods))
		}
		if r.From < "0001-01-01" {
			// The year 0 is no date the ERP can hold.
			return nil, toolerr.New(toolerr.InvalidArgument, "period %s counted from as_of_date %s would start before the year 1; give a later as_of_date or from_date/to_date", a.Period, a.AsOfDate)
		}
	} else {
		if a.FromDate == "" || a.ToDate == "" {
			return nil, toolerr.New(toolerr.InvalidArgument, "give both from_date and to_date (or period with as_of_date)")
		}
		from, err := parseDate("from_date", a.FromDate)
		if err != nil {
			return nil, err
		}
		to, err := parseDate("to_date", a.ToDate)
		if err != nil {
			return nil, err
		}
		if from.After(to) {
			return nil, toolerr.New(toolerr.InvalidArgument, "from_date %s is after to_date %s", a.FromDate, a.ToDate)
		}
		r.From, r.To = a.FromDate, a.ToDate
	}
	if rules.maxDays > 0 && r.days() > rules.maxDays {
		return nil, toolerr.New(toolerr.InvalidArgument, "the range %s to %s is %d days; this report allows at most %d days per call, so split it into shorter ranges", r.From, r.To, r.days(), rules.maxDays)
	}
	return &r, nil
}

// fiscalYear is one Fiscal Year record.
type fiscalYear struct {
	Name  string
	Start string
	End   string
}

// fiscalYearFor finds the enabled fiscal year of company that contains
// date, the way ERPNext does: a year linked to the company, else a year
// linked to no company.
func (c *client) fiscalYearFor(ctx context.Context, company, date string) (fiscalYear, error) {
	// Two years tell one from many, so a site's low row cap (pageOf, and
	// the one row more a page may ask for) still leaves room for both.
	q := listQuery{
		Fields:     []string{"name", "year_start_date", "year_end_date"},
		OrderBy:    "year_start_date desc, name desc",
		PageLength: c.pageOf(9) + 1,
	}
	q.Filters.add("disabled", "=", 0)
	q.Filters.add("year_start_date", "<=", date)
	q.Filters.add("year_end_date", ">=", date)
	all, err := c.list(ctx, "Fiscal Year", q)
	if err != nil {
		return fiscalYear{}, err
	}
	linked := q
	linked.Filters = append(filters{}, q.Filters...)
	linked.Filters.addChild("Fiscal Year Company", "company", "=", company)
	mine, err := c.list(ctx, "Fiscal Year", linked)
	if err != nil {
		return fiscalYear{}, err
	}
	pick := func(rows []map[string]any) (fiscalYear, bool) {
		seen := map[string]bool{}
		var out []fiscalYear
		for _, r := range rows {
			fy := fiscalYear{Name: str(r["name"]), Start: str(r["year_start_date"]), End: str(r["year_end_date"])}
			if !seen[fy.Name] {
				seen[fy.Name] = true
				out = append(out, fy)
			}
		}
		if len(out) == 1 {
			return out[0], true
		}
		return fiscalYear{}, false
	}
	if fy, ok := pick(mine); ok {
		return fy, nil
	}
	if len(mine) == 0 {
		// A year linked to other companies only is never this company's.
		shared, err := c.unlinkedYears(ctx, all)
		if err != nil {
			return fiscalYear{}, err
		}
		if fy, ok := pick(shared); ok {
			return fy, nil
		}
		if len(shared) == 0 {
			return fiscalYear{}, toolerr.New(toolerr.NotFound, "the ERP has no enabled fiscal year of company %s containing %s that this user can see; use from_date and to_date instead", company, date)
		}
	}
	return fiscalYear{}, toolerr.New(toolerr.InvalidArgument, "more than one fiscal year contains %s for company %s; use from_date and to_date instead (see list_fiscal_years)", date, company)
}

// unlinkedYears returns the fiscal years of rows that are linked to no
// company, which ERPNext lets every company use.
func (c *client) unlinkedYears(ctx context.Context, rows []map[string]any) ([]map[string]any, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = str(r["name"])
	}
	q := listQuery{Fields: []string{"name", "parent"}, OrderBy: "parent asc, idx asc, name asc"}
	q.Filters.add("parent", "in", names)
	pageSize := c.pageOf(walkPageSize)
	links, truncated, err := walkChildRows(ctx, c, "Fiscal Year Company", "Fiscal Year", q, pageSize, literalWalkBound)
	if err != nil {
		return nil, err
	}
	if truncated {
		return nil, toolerr.New(toolerr.ResponseTooLarge, "the fiscal years containing this date are linked to more than %d companies; use from_date and to_date instead", walkBound(pageSize, literalWalkBound))
	}
	linked := map[string]bool{}
	for _, l := range links {
		linked[str(l["parent"])] = true
	}
	var out []map[string]any
	for _, r := range rows {
		if !linked[str(r["name"])] {
			out = append(out, r)
		}
	}
	return out, nil
}

// str returns a string value or "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

// joinOr renders values as "a, b or c".
func joinOr(values []string) string { return joinWith(values, "or") }

// joinAnd renders values as "a, b and c".
func joinAnd(values []string) string { return joinWith(values, "and") }

func joinWith(values []string, word string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	out := ""
	for i, v := range values[:len(values)-1] {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return fmt.Sprintf("%s %s %s", out, word, values[len(values)-1])
}
