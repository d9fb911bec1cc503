package frappetest

import (
	"fmt"
	"time"
)

// Small lookups and date helpers shared by the generator stages.

func (g *generator) companyByName(name string) *companyInfo {
	for _, c := range g.companies {
		if c.Name == name {
			return c
		}
	}
	panic("frappetest: unknown company " + name)
}

func (g *generator) itemByCode(code string) *itemInfo {
	for _, it := range g.items {
		if it.Code == code {
			return it
		}
	}
	panic("frappetest: unknown item " + code)
}

// docs returns the documents of a doctype generated so far, in insertion
// order (the dataset is sorted only when generation finishes).
func (g *generator) docs(doctype string) []*Doc { return g.ds.tables[doctype].rows }

// mustDate parses "YYYY-MM-DD".
func mustDate(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic("frappetest: bad date " + s)
	}
	return t
}

// mustDatetime parses a stored Datetime value.
func mustDatetime(s string) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05.000000", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	panic("frappetest: bad datetime " + s)
}

// postedAt is a document's posting_date + posting_time.
func postedAt(d *Doc) time.Time {
	t := mustDate(d.Str("posting_date"))
	if us, ok := timeMicros(d.Str("posting_time")); ok {
		t = t.Add(time.Duration(us) * time.Microsecond)
	}
	return t
}

// minTime and maxTime pick the earlier / later instant.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// dayOf truncates to midnight UTC.
func dayOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// setPosting writes posting_date and posting_time from t.
func setPosting(d *Doc, t time.Time) {
	d.Fields["posting_date"] = fmtDate(t)
	d.Fields["posting_time"] = fmtTime(t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
}

// series hands out naming-series numbers per prefix and year, like
// "ACC-PAY-.YYYY.-" with five digits.
type series map[string]int

func (s series) next(prefix string, year int) string {
	key := fmt.Sprintf("%s%d-", prefix, year)
	s[key]++
	return fmt.Sprintf("%s%05d", key, s[key])
}

// fiscalYearOf names the fiscal year of a date (calendar years).
func fiscalYearOf(date string) string { return date[:4] }

// costIn is the purchase price of an item in a currency: 60% of the list
// price, rounded to 5 cents.
func costIn(it *itemInfo, currency string) int64 {
	c := priceIn(it, currency) * 60 / 100
	return (c + 2) / 5 * 5
}
