package frappe

import (
	"encoding/json"
	"strings"
)

// filter is one Frappe filter condition, sent as [field, operator, value].
type filter struct {
	Field string
	Op    string
	Value any
}

// filters is a list of conditions that Frappe ANDs together (or ORs, when
// sent as or_filters).
type filters []filter

func (f filters) encode() string {
	rows := make([][3]any, len(f))
	for i, c := range f {
		rows[i] = [3]any{c.Field, c.Op, c.Value}
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

func (f *filters) add(field, op string, value any) { *f = append(*f, filter{field, op, value}) }

// addIf adds an equality filter when value is not empty.
func (f *filters) addIf(field, value string) {
	if value != "" {
		f.add(field, "=", value)
	}
}

// escapeLike escapes the LIKE wildcards and the escape character in text
// that a person typed, so "50%" matches the characters 5, 0, % literally.
func escapeLike(text string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(text)
}

// containsPattern is a LIKE pattern matching text anywhere.
func containsPattern(text string) string { return "%" + escapeLike(text) + "%" }
