package acumaticatest

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Record is one entity row as the simulator stores it. Field values are
// Go values: string (StringValue, GuidValue), int64 (Int/Short/Long/Byte),
// bool, Decimal (Decimal/Double) or time.Time (DateTimeValue); a missing
// field is empty and serialises as {} (booleans as false, decimals as 0).
type Record struct {
	// Entity is the schema name: a top-level entity ("SalesOrder") or a
	// sub-entity ("SalesOrderDetail", "Contact", "Address").
	Entity string
	// ID is the record's "id" (the NoteID of top-level rows).
	ID string
	// Note is the record note ("" when none).
	Note    string
	Fields  map[string]any
	Details map[string][]*Record
	Linked  map[string]*Record
}

func newRecord(entity, id string) *Record {
	return &Record{Entity: entity, ID: id, Fields: map[string]any{}}
}

// Value returns the raw value of a field (nil when empty).
func (r *Record) Value(field string) any { return r.Fields[field] }

// String returns a string field ("" when empty or not a string).
func (r *Record) String(field string) string {
	s, _ := r.Fields[field].(string)
	return s
}

// Int returns an integer field (0 when empty).
func (r *Record) Int(field string) int64 {
	n, _ := r.Fields[field].(int64)
	return n
}

// Bool returns a boolean field (false when empty).
func (r *Record) Bool(field string) bool {
	b, _ := r.Fields[field].(bool)
	return b
}

// Decimal returns a decimal field (0 when empty).
func (r *Record) Decimal(field string) Decimal {
	d, _ := r.Fields[field].(Decimal)
	return d
}

// Time returns a date-time field (zero when empty).
func (r *Record) Time(field string) time.Time {
	t, _ := r.Fields[field].(time.Time)
	return t
}

// Keys returns a top-level record's key values in URL order (display
// values, e.g. ["Credit Memo", "AR000015"]).
func (r *Record) Keys() []string {
	var out []string
	for _, k := range KeyFields(r.Entity) {
		out = append(out, keyString(r.Fields[k]))
	}
	return out
}

// Detail returns the lines of a detail collection.
func (r *Record) Detail(name string) []*Record { return r.Details[name] }

// Link returns a linked entity (nil when absent).
func (r *Record) Link(name string) *Record { return r.Linked[name] }

func (r *Record) set(field string, v any) *Record {
	switch x := v.(type) {
	case nil:
		delete(r.Fields, field)
	case int:
		r.Fields[field] = int64(x)
	case string:
		if x == "" {
			delete(r.Fields, field)
		} else {
			r.Fields[field] = x
		}
	default:
		r.Fields[field] = v
	}
	return r
}

func (r *Record) addDetail(name string, line *Record) {
	if r.Details == nil {
		r.Details = map[string][]*Record{}
	}
	r.Details[name] = append(r.Details[name], line)
}

func (r *Record) link(name string, l *Record) {
	if r.Linked == nil {
		r.Linked = map[string]*Record{}
	}
	r.Linked[name] = l
}

// clone copies r deeply enough for copy-on-write updates.
func (r *Record) clone() *Record {
	c := &Record{Entity: r.Entity, ID: r.ID, Note: r.Note, Fields: make(map[string]any, len(r.Fields))}
	for k, v := range r.Fields {
		c.Fields[k] = v
	}
	if r.Details != nil {
		c.Details = map[string][]*Record{}
		for k, lines := range r.Details {
			c.Details[k] = slices.Clone(lines)
		}
	}
	if r.Linked != nil {
		c.Linked = map[string]*Record{}
		for k, l := range r.Linked {
			c.Linked[k] = l
		}
	}
	return c
}

// keyString renders a key field for URL matching (display value).
func keyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return ""
	}
	return ""
}

// normKey is the comparison form of a key value: SQL Server's default
// collation ignores case and trailing spaces.
func normKey(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }

// table holds the rows of one top-level entity in key order.
type table struct {
	entity string
	keys   []string
	rows   []*Record
	byKey  map[string]*Record
	byID   map[string]*Record
}

func (t *table) keyOf(r *Record) string {
	parts := make([]string, len(t.keys))
	for i, k := range t.keys {
		parts[i] = normKey(keyString(r.Fields[k]))
	}
	return strings.Join(parts, "\x00")
}

func (t *table) put(r *Record) {
	k := t.keyOf(r)
	if old, ok := t.byKey[k]; ok {
		delete(t.byID, old.ID)
		for i, row := range t.rows {
			if row == old {
				t.rows[i] = r
				break
			}
		}
	} else {
		t.rows = append(t.rows, r)
	}
	t.byKey[k] = r
	t.byID[strings.ToLower(r.ID)] = r
}

func (t *table) remove(r *Record) {
	delete(t.byKey, t.keyOf(r))
	delete(t.byID, strings.ToLower(r.ID))
	t.rows = slices.DeleteFunc(t.rows, func(x *Record) bool { return x == r })
}

// sort orders rows by their keys: numbers numerically, text
// case-insensitively, as the clustered index returns them.
func (t *table) sort() {
	sort.SliceStable(t.rows, func(i, j int) bool {
		for _, k := range t.keys {
			a, b := t.rows[i].Fields[k], t.rows[j].Fields[k]
			if c := compareKeyValues(a, b); c != 0 {
				return c < 0
			}
		}
		return false
	})
}

func compareKeyValues(a, b any) int {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	}
	return strings.Compare(normKey(keyString(a)), normKey(keyString(b)))
}

// Dataset is the simulator's demo company: every top-level entity's rows
// and the Generic Inquiries. It is deterministic: two simulators built
// with the same Options.Now hold identical data. Tests use it to compute
// expected values independently of the HTTP layer; treat it as read-only.
type Dataset struct {
	mu        sync.RWMutex
	now       time.Time
	tables    map[string]*table
	inquiries []*Inquiry
}

func newDataset(now time.Time) *Dataset {
	return &Dataset{now: now, tables: map[string]*table{}}
}

func (d *Dataset) table(entity string) *table {
	t := d.tables[entity]
	if t == nil {
		es := endpoints()[Version24].schema(entity)
		if es == nil || !es.TopLevel {
			panic("acumaticatest: not a top-level entity: " + entity)
		}
		t = &table{entity: entity, keys: es.Keys, byKey: map[string]*Record{}, byID: map[string]*Record{}}
		d.tables[entity] = t
	}
	return t
}

func (d *Dataset) add(r *Record) *Record {
	d.table(r.Entity).put(r)
	return r
}

// Entities lists the top-level entities that hold data, sorted.
func (d *Dataset) Entities() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]string, 0, len(d.tables))
	for n, t := range d.tables {
		if len(t.rows) > 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Records returns the rows of an entity in the order a list request
// returns them (key order).
func (d *Dataset) Records(entity string) []*Record {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if t := d.tables[entity]; t != nil {
		return slices.Clone(t.rows)
	}
	return nil
}

// Find returns the row with the given key values (URL order, display
// values, matched like SQL Server: case- and trailing-space-insensitive),
// or nil.
func (d *Dataset) Find(entity string, keys ...string) *Record {
	d.mu.RLock()
	defer d.mu.RUnlock()
	t := d.tables[entity]
	if t == nil || len(keys) != len(t.keys) {
		return nil
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = normKey(k)
	}
	return t.byKey[strings.Join(parts, "\x00")]
}

// ByID returns the row whose id (NoteID) is id, or nil.
func (d *Dataset) ByID(entity, id string) *Record {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if t := d.tables[entity]; t != nil {
		return t.byID[strings.ToLower(id)]
	}
	return nil
}

// KeyFields returns the key fields of an entity in URL order.
func KeyFields(entity string) []string {
	if es := endpoints()[Version24].schema(entity); es != nil {
		return slices.Clone(es.Keys)
	}
	return nil
}

// Screen returns the form (screen ID) of a top-level entity, e.g.
// "AR303000" for Customer.
func Screen(entity string) string {
	if es := endpoints()[Version24].schema(entity); es != nil {
		return es.Screen
	}
	return ""
}

// Inquiries returns the Generic Inquiries exposed through OData.
func (d *Dataset) Inquiries() []*Inquiry { return slices.Clone(d.inquiries) }

// Inquiry returns the inquiry with the given entity-set name, or nil.
func (d *Dataset) Inquiry(name string) *Inquiry {
	for _, q := range d.inquiries {
		if q.Name == name {
			return q
		}
	}
	return nil
}
