package acumatica

import (
	"encoding/json"
	"fmt"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// The list tools do not page. Instead of a bare array they return an
// envelope that says whether the result was cut off and, when it was, that
// the model must narrow the request rather than call again. The rule is a contract the model reads;
// no server-side cooldown enforces it.

// listEnvelope is the result of every list tool.
type listEnvelope struct {
	Results []any `json:"results"`
	envelopeStatus
}

// envelopeStatus is a list envelope without its rows.
type envelopeStatus struct {
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
	kept, status := newStatus(len(rows), limit, recordCap, refine)
	env := listEnvelope{Results: rows[:kept], envelopeStatus: status}
	if env.Results == nil {
		env.Results = []any{}
	}
	return env
}

// newStatus is newEnvelope for n rows: how many to keep, and the status.
func newStatus(n, limit, recordCap int, refine string) (kept int, st envelopeStatus) {
	st.RecordLimit = limit
	kept = n
	if n > limit {
		kept = limit
		st.Truncated = true
		if limit >= recordCap {
			st.ActionRequired = fmt.Sprintf("Results were truncated at %d records, the most this site allows in one call, and this tool does NOT support pagination. "+
				"Do NOT call this tool again to get more records. Instead, stop and ask the user to narrow the request (%s), then run it once with that narrower request.", limit, refine)
		} else {
			st.ActionRequired = fmt.Sprintf("More records match than the %d returned (top=%d), and this tool does NOT support pagination. "+
				"Do not page. If the user needs them all, repeat the call once with a larger top (at most %d); otherwise narrow the request (%s).", limit, limit, recordCap, refine)
		}
	}
	st.RecordsReturned = kept
	return kept, st
}

// unwrappedEnvelope encodes a list envelope whose rows are records as
// Acumatica wrote them, rows rawjson.Elements returned (so checked): each
// is unwrapped without being decoded (appendCheckedRecord) and put, as
// "results", before the members of rest, a struct that embeds the
// envelope's status.
func unwrappedEnvelope(rows []json.RawMessage, rest any) (connector.RawResult, error) {
	tail, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	// Unwrapped rows are never longer than Acumatica's: one allocation.
	size := len(`{"results":,`) + rawjson.ArrayLen(rows) + len(tail)
	out := append(make([]byte, 0, size), `{"results":[`...)
	for i, r := range rows {
		if i > 0 {
			out = append(out, ',')
		}
		if out, err = appendCheckedRecord(out, r); err != nil {
			return nil, outbound.InvalidJSON(err)
		}
	}
	out, err = rawjson.AppendMembers(append(out, ']'), tail)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", rest, err)
	}
	return out, nil
}
