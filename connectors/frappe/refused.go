package frappe

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Fields a list query cannot have. Frappe v15 meets a field of a list query
// that this user or this site does not have in two ways (issue 15, item 5):
//
//   - a field above the user's permlevel (field-level permissions) is
//     dropped by reportview.validate_fields without a word: the rows lack
//     its key, and "sum(f) as x" lacks x;
//   - a field the DocType does not have (an older release, a customised
//     site) is refused with 417 DataError "Field not permitted in query:
//     <field>", and the whole query fails.
//
// A query with AllowUnavailable set survives both: a refused field is left
// out and the query asked again (once per refused field), a dropped one is
// noticed by its missing key, and either is noted on the client so the tool
// can say which fields were unavailable. A total over such a field is
// unknown, never zero. A refused field the query also filters, sorts or
// groups by is never left out, since that would widen the answer: the
// query fails with a message naming the field.

// notPermittedPrefix starts reportview.raise_invalid_field's message.
const notPermittedPrefix = "Field not permitted in query: "

// refusedField is the cause of a 417 that names one field of the query.
type refusedField struct{ field string }

func (e *refusedField) Error() string { return "the ERP refused the field " + e.field }

// refusedFieldIn reads the field a Frappe error body refuses: from
// _server_messages, else from the exception line.
func refusedFieldIn(fe frappeError, message string) (string, bool) {
	if fe.ExcType != "DataError" {
		return "", false
	}
	for _, text := range []string{message, strings.TrimPrefix(fe.Exception, "frappe.exceptions.DataError: ")} {
		if f, ok := strings.CutPrefix(text, notPermittedPrefix); ok {
			if f = strings.TrimSpace(f); f != "" && !strings.Contains(f, ";") {
				return f, true
			}
		}
	}
	return "", false
}

// refusedColumn returns the column named in a refusal, without table or
// backticks: "tabSales Invoice Item.item_code" is "item_code".
func refusedColumn(err error) (string, bool) {
	var rf *refusedField
	if !errors.As(err, &rf) {
		return "", false
	}
	return bareColumn(rf.field), true
}

func bareColumn(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// fieldRef splits one entry of a fields list into the column it reads and
// the key it has in the answer: "sum(base_net_total) as net" reads
// base_net_total into net; "`tabSales Invoice Item`.item_code" reads
// item_code into item_code.
func fieldRef(expr string) (column, key string) {
	body := expr
	if i := lastIndexFold(expr, " as "); i >= 0 {
		body, key = expr[:i], strings.TrimSpace(expr[i+4:])
	}
	if open, close := strings.IndexByte(body, '('), strings.LastIndexByte(body, ')'); open >= 0 && close > open {
		body = strings.TrimSpace(body[open+1 : close])
		if len(body) >= 9 && strings.EqualFold(body[:9], "distinct ") {
			body = body[9:]
		}
	}
	column = bareColumn(body)
	if key == "" {
		key = column
	}
	return column, key
}

// lastIndexFold is the last index of the ASCII word sep in s, ignoring
// ASCII case; byte offsets stay those of s whatever else s holds.
func lastIndexFold(s, sep string) int {
	for i := len(s) - len(sep); i >= 0; i-- {
		if strings.EqualFold(s[i:i+len(sep)], sep) {
			return i
		}
	}
	return -1
}

// mapHas reports which of keys a decoded row carries.
func mapHas(row map[string]any, keys []string) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		_, out[i] = row[k]
	}
	return out
}

// rawHas reports which of keys a row kept as JSON carries, reading it once.
// Frappe sends the keys in the order they were asked for, so each member
// is compared with the next key first.
func rawHas(row json.RawMessage, keys []string) []bool {
	out := make([]bool, len(keys))
	next := 0
	_ = rawjson.EachMember(row, func(f rawjson.Field) {
		if next < len(keys) && f.Is(keys[next]) {
			out[next] = true
			next++
			return
		}
		for i, k := range keys {
			if !out[i] && f.Is(k) {
				out[i] = true
			}
		}
	})
	return out
}

// withoutColumn returns fields without the entries that read column; ok is
// false when none does.
func withoutColumn(fields []string, column string) (out []string, ok bool) {
	for _, f := range fields {
		if c, _ := fieldRef(f); c == column {
			ok = true
			continue
		}
		out = append(out, f)
	}
	return out, ok
}

// unavailableFields remembers, for one tool call, the columns of each
// DocType that the ERP would not return.
type unavailableFields struct {
	mu      sync.Mutex
	columns map[string][]string
}

func (u *unavailableFields) note(doctype, column string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.columns == nil {
		u.columns = map[string][]string{}
	}
	if !slices.Contains(u.columns[doctype], column) {
		u.columns[doctype] = append(u.columns[doctype], column)
		slices.Sort(u.columns[doctype])
	}
}

// of returns the unavailable columns of doctype, sorted (nil for none).
func (u *unavailableFields) of(doctype string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.columns[doctype])
}

// has reports whether column of doctype was unavailable.
func (u *unavailableFields) has(doctype, column string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Contains(u.columns[doctype], column)
}

// askAvailable runs q; see the comment at the top of this file. present
// reports which of keys a row carries.
func askAvailable[R any](u *unavailableFields, doctype string, q listQuery, run func(listQuery) ([]R, error), present func(R, []string) []bool) ([]R, error) {
	for _, col := range u.of(doctype) {
		q.Fields, _ = withoutColumn(q.Fields, col)
	}
	for range len(q.Fields) + 1 {
		rows, err := run(q)
		if err == nil {
			if len(rows) > 0 {
				cols, keys := make([]string, len(q.Fields)), make([]string, len(q.Fields))
				for i, f := range q.Fields {
					cols[i], keys[i] = fieldRef(f)
				}
				for i, ok := range present(rows[0], keys) {
					if !ok {
						u.note(doctype, cols[i])
					}
				}
			}
			return rows, nil
		}
		col, refused := refusedColumn(err)
		if !refused {
			return nil, err
		}
		fields, ok := withoutColumn(q.Fields, col)
		if !ok {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the ERP has no field %s that this user may query in %s: this site's %s lacks it, or field permissions hide it from this user; leave out the argument that filters or sorts by it", col, plural(doctype), doctype)
		}
		u.note(doctype, col)
		q.Fields = fields
	}
	return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP kept refusing fields of the list of %s", plural(doctype))
}
