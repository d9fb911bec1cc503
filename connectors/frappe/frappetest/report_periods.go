package frappetest

import (
	"strings"
	"time"
)

// Financial statement periods (financial_statements.get_period_list).

type fsPeriod struct {
	from, to, key, label string
	fyStartOfFrom        string
}

var periodMonths = map[string]int{"Yearly": 12, "Half-Yearly": 6, "Quarterly": 3, "Monthly": 1}

// fiscalYearOf returns the fiscal year containing date, or an error like
// erpnext.accounts.utils.get_fiscal_year (a msgprint, then
// FiscalYearError).
func (rc *reportCtx) fiscalYearOfDate(date, company string) (*Doc, *apiError) {
	for _, fy := range rc.ds.List("Fiscal Year") {
		if fy.Int("disabled") == 0 && date >= fy.Str("year_start_date") && date <= fy.Str("year_end_date") {
			return fy, nil
		}
	}
	msg := "Date " + formatDateDMY(date) + " is not in any active Fiscal Year"
	if company != "" {
		msg += " for <strong>" + company + "</strong>"
	}
	rc.msgprint(msg)
	e := frappeThrow("ValidationError", msg, "")
	e.excType, e.excPath, e.messages = "FiscalYearError", "erpnext.accounts.utils.FiscalYearError", nil
	return nil, e
}

func (rc *reportCtx) periodList(company string) (periods []fsPeriod, yStart, yEnd string, err *apiError) {
	f, ds := rc.f, rc.ds
	periodicity := f.get("periodicity")
	if f.str("filter_based_on") == "Fiscal Year" {
		var fromStart, toEnd string
		if fy := ds.Get("Fiscal Year", f.str("from_fiscal_year")); fy != nil {
			fromStart = fy.Str("year_start_date")
		}
		if fy := ds.Get("Fiscal Year", f.str("to_fiscal_year")); fy != nil {
			toEnd = fy.Str("year_end_date")
		}
		if fromStart != "" && toEnd != "" {
			for _, fy := range ds.List("Fiscal Year") {
				s, e := fy.Str("year_start_date"), fy.Str("year_end_date")
				if s >= fromStart && e <= toEnd {
					if yStart == "" || s < yStart {
						yStart = s
					}
					if e > yEnd {
						yEnd = e
					}
				}
			}
		}
		if yStart == "" || yEnd == "" {
			return nil, "", "", validationError("Start Year and End Year are mandatory")
		}
		if yEnd < yStart {
			return nil, "", "", validationError("End Year cannot be before Start Year")
		}
	} else {
		if !f.truthy("period_start_date") || !f.truthy("period_end_date") {
			return nil, "", "", validationError("From Date and To Date are mandatory")
		}
		if f.str("period_end_date") < f.str("period_start_date") {
			return nil, "", "", validationError("To Date cannot be less than From Date")
		}
		if yStart, err = f.date("period_start_date"); err != nil {
			return nil, "", "", err
		}
		if yEnd, err = f.date("period_end_date"); err != nil {
			return nil, "", "", err
		}
	}
	step, ok := periodMonths[cstr(periodicity)]
	if !ok || periodicity == nil {
		return nil, "", "", pythonError("KeyError", pyRepr(periodicity))
	}
	start, end := mustDate(yStart), mustDate(yEnd)
	months := (12*end.Year() + int(end.Month())) - (12*start.Year() + int(start.Month())) + 1
	n := (months + step - 1) / step
	for i := 0; i < n; i++ {
		p := fsPeriod{from: fmtDate(start)}
		var to time.Time
		if i == 0 && f.str("filter_based_on") != "Fiscal Year" {
			to = addMonths(time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC), step)
		} else {
			to = addMonths(start, step)
		}
		start = to
		to = to.AddDate(0, 0, -1)
		if to.After(end) {
			to = end
		}
		p.to = fmtDate(to)
		if _, err := rc.fiscalYearOfDate(p.to, company); err != nil {
			return nil, "", "", err
		}
		fy, err := rc.fiscalYearOfDate(p.from, company)
		if err != nil {
			return nil, "", "", err
		}
		p.fyStartOfFrom = fy.Str("year_start_date")
		periods = append(periods, p)
		if p.to == yEnd {
			break
		}
	}
	accumulated := f.truthy("accumulated_values")
	for i := range periods {
		p := &periods[i]
		to := mustDate(p.to)
		p.key = strings.ToLower(to.Format("Jan_2006"))
		switch {
		case cstr(periodicity) == "Monthly" && !accumulated:
			p.label = to.Format("Jan 2006")
		case !accumulated:
			p.label = periodLabel(cstr(periodicity), p.from, p.to)
		default:
			p.label = periodLabel(cstr(periodicity), p.fyStartOfFrom, p.to)
		}
	}
	return periods, yStart, yEnd, nil
}

// addMonths is frappe.utils.add_months (relativedelta: the day is clamped
// to the month's length).
func addMonths(t time.Time, n int) time.Time {
	y, m := t.Year(), int(t.Month())-1+n
	y += m / 12
	m %= 12
	if m < 0 {
		m += 12
		y--
	}
	first := time.Date(y, time.Month(m+1), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(t.Day(), last)-1)
}

func periodLabel(periodicity, from, to string) string {
	f, t := mustDate(from), mustDate(to)
	if periodicity == "Yearly" {
		if f.Year() == t.Year() {
			return f.Format("2006")
		}
		return f.Format("2006") + "-" + t.Format("2006")
	}
	return f.Format("Jan 06") + "-" + t.Format("Jan 06")
}
