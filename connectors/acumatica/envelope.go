package acumatica

import "fmt"

// The list tools do not page. Instead of a bare array they return an
// envelope that says whether the result was cut off and, when it was, that
// the model must narrow the request rather than call again (seed 000,
// "Pagination Refusal Semantics"). The rule is a contract the model reads;
// no server-side cooldown enforces it.

// listEnvelope is the result of every list tool.
type listEnvelope struct {
	Results             []any  `json:"results"`
	Truncated           bool   `json:"truncated"`
	RecordsReturned     int    `json:"recordsReturned"`
	RecordLimit         int    `json:"recordLimit"`
	PaginationSupported bool   `json:"paginationSupported"`
	ActionRequired      string `json:"actionRequired,omitempty"`
}

// rowLimit is how many rows a list returns: top (defaultTop when unset),
// never more than the site's cap.
func rowLimit(top, recordCap int) int {
	if top <= 0 {
		top = defaultTop
	}
	return min(top, recordCap)
}

// newEnvelope wraps rows fetched with one more than limit requested: a
// row beyond limit proves the result was cut off. recordCap is the site's
// cap; narrowing is the only way on when limit reached it.
func newEnvelope(rows []any, limit, recordCap int, refine string) listEnvelope {
	env := listEnvelope{Results: rows, RecordLimit: limit}
	if env.Results == nil {
		env.Results = []any{}
	}
	if len(rows) > limit {
		env.Results = rows[:limit]
		env.Truncated = true
		if limit >= recordCap {
			env.ActionRequired = fmt.Sprintf("Results were truncated at %d records, the most this site allows in one call, and this tool does NOT support pagination. "+
				"Do NOT call this tool again to get more records. Instead, stop and ask the user to narrow the request (%s), then run it once with that narrower request.", limit, refine)
		} else {
			env.ActionRequired = fmt.Sprintf("More records match than the %d returned (top=%d), and this tool does NOT support pagination. "+
				"Do not page. If the user needs them all, repeat the call once with a larger top (at most %d); otherwise narrow the request (%s).", limit, limit, recordCap, refine)
		}
	}
	env.RecordsReturned = len(env.Results)
	return env
}
