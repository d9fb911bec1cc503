package activity

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Query parameters the viewer pages and the admin API share.
const (
	ParamFrom      = "from"
	ParamTo        = "to"
	ParamSite      = "site"
	ParamERPUser   = "erp_user"
	ParamTool      = "tool"
	ParamOutcome   = "outcome"
	ParamErrorCode = "error_code"
	ParamClient    = "client"
	ParamRedacted  = "redacted"
	ParamRequestID = "request_id"
	ParamAfter     = "after"
)

// DefaultRange is the time range when the query gives no start: the last
// 24 hours.
const DefaultRange = 24 * time.Hour

// maxText bounds a text filter; no ERP user, tool, code or client is longer.
const maxText = 320

// Outcomes a filter accepts, per view.
var (
	UsageOutcomes = []string{"success", "error", "cancelled"}
	AuditOutcomes = []string{"success", "refused", "error"}
)

// timeLayouts are what a range bound may be written as: RFC 3339, or a
// browser's datetime-local value, read as UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// earliest and latest bound a time a query may name.
var (
	earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Parsed is a filter read from a query, with the site as written (a slug
// or an id, resolved by the caller) and the page position.
type Parsed struct {
	Filter Filter
	Site   string
	After  *Cursor
}

// ParseQuery reads the viewer's filters from v. The range defaults to the
// DefaultRange before now; outcomes must be one of outcomes. Every problem
// is reported at once, each as a plain sentence.
func ParseQuery(v url.Values, now time.Time, outcomes []string) (Parsed, error) {
	var p Parsed
	var problems []string
	readTime := func(name, label string) time.Time {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return time.Time{}
		}
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, s); err == nil {
				if t.Before(earliest) || !t.Before(latest) {
					break
				}
				return t.UTC()
			}
		}
		problems = append(problems, fmt.Sprintf("The %s time is not a date and time erpgate reads: write it as 2026-12-01T09:30 (UTC), between the years 2000 and 2199.", label))
		return time.Time{}
	}
	readText := func(name, label string) string {
		s := strings.TrimSpace(v.Get(name))
		// NUL is not text to PostgreSQL, which would refuse the query.
		if len(s) > maxText || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			problems = append(problems, fmt.Sprintf("The %s filter is longer than %d characters or is not text.", label, maxText))
			return ""
		}
		return s
	}
	f := &p.Filter
	f.From, f.To = readTime(ParamFrom, "start"), readTime(ParamTo, "end")
	if f.To.IsZero() && len(problems) == 0 {
		f.To = now.UTC().Truncate(time.Minute).Add(time.Minute)
	}
	if f.From.IsZero() && len(problems) == 0 {
		f.From = f.To.Add(-DefaultRange)
		if f.From.Before(earliest) {
			f.From = earliest
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		problems = append(problems, "The start of the time range must be before its end.")
	}
	p.Site = readText(ParamSite, "site")
	f.ERPUser = readText(ParamERPUser, "ERP user")
	f.Tool = readText(ParamTool, "tool")
	f.ErrorCode = readText(ParamErrorCode, "error code")
	f.Client = readText(ParamClient, "client")
	f.RequestID = readText(ParamRequestID, "request id")
	if o := strings.TrimSpace(v.Get(ParamOutcome)); o != "" {
		known := false
		for _, k := range outcomes {
			known = known || o == k
		}
		if !known {
			problems = append(problems, "The outcome must be one of: "+strings.Join(outcomes, ", ")+".")
		} else {
			f.Outcome = o
		}
	}
	switch strings.TrimSpace(v.Get(ParamRedacted)) {
	case "":
	case "yes":
		f.Redacted = true
	default:
		problems = append(problems, "The redacted filter is either yes (only calls with redacted values) or empty.")
	}
	c, ok, err := ParseCursor(v.Get(ParamAfter))
	if err != nil {
		problems = append(problems, "The page position is not one this viewer made; start again from the first page.")
	} else if ok {
		p.After = &c
	}
	if len(problems) > 0 {
		return Parsed{}, &QueryError{Problems: problems}
	}
	return p, nil
}

// QueryError lists what is wrong with a query, one sentence each.
type QueryError struct {
	Problems []string
}

func (e *QueryError) Error() string { return strings.Join(e.Problems, " ") }

// IsQueryError reports whether err is a QueryError.
func IsQueryError(err error) bool {
	var q *QueryError
	return errors.As(err, &q)
}

// Values writes f back as query parameters (site as given), for links that
// keep the filters: the next page, the export.
func Values(f Filter, site string) url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	if !f.From.IsZero() {
		v.Set(ParamFrom, f.From.UTC().Format(time.RFC3339))
	}
	if !f.To.IsZero() {
		v.Set(ParamTo, f.To.UTC().Format(time.RFC3339))
	}
	set(ParamSite, site)
	set(ParamERPUser, f.ERPUser)
	set(ParamTool, f.Tool)
	set(ParamOutcome, f.Outcome)
	set(ParamErrorCode, f.ErrorCode)
	set(ParamClient, f.Client)
	set(ParamRequestID, f.RequestID)
	if f.Redacted {
		v.Set(ParamRedacted, "yes")
	}
	return v
}
