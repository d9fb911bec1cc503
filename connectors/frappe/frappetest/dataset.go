package frappetest

import (
	"sort"
	"sync"
)

// Doc is one stored document (a table row). Values use these Go types:
// string (Data, Link, Select, Text, Date "YYYY-MM-DD", Datetime
// "YYYY-MM-DD HH:MM:SS[.ffffff]", Time "H:MM:SS[.ffffff]"), int64 (Int,
// Check, docstatus, idx) and Decimal (Float, Currency, Percent). Numeric
// columns are never NULL: Frappe creates them NOT NULL DEFAULT 0.
//
// Fields holds the values set on this document; a column it does not
// mention has its doctype's insert-time default (0 for numbers, the static
// default, else NULL). Read columns with Get or the typed accessors.
type Doc struct {
	DocType string
	Name    string
	Fields  map[string]any
	// Children holds child-table rows by table fieldname, in idx order.
	Children map[string][]*Doc
	// defaults is the doctype's insert-time template (shared, read-only).
	defaults map[string]any
}

// Get returns the value of a column (standard or data field), nil if NULL.
func (d *Doc) Get(field string) any {
	if field == "name" {
		return d.Name
	}
	if v, ok := d.Fields[field]; ok {
		return v
	}
	return d.defaults[field]
}

// Str returns a string column, "" when NULL.
func (d *Doc) Str(field string) string {
	s, _ := d.Get(field).(string)
	return s
}

// Int returns an integer column (Int, Check, docstatus, idx).
func (d *Doc) Int(field string) int64 {
	i, _ := d.Get(field).(int64)
	return i
}

// Dec returns a decimal column (Currency, Float, Percent).
func (d *Doc) Dec(field string) Decimal {
	v, _ := d.Get(field).(Decimal)
	return v
}

// Table returns the child rows of a table field.
func (d *Doc) Table(field string) []*Doc { return d.Children[field] }

// Dataset is the simulator's complete, read-only data. Tests read it to
// compute the values they expect from the HTTP API.
type Dataset struct {
	tables map[string]*docTable
	// children indexes child rows by child doctype, for joins.
	children map[string][]*Doc
	meta     *registry
	// Today is the date used for status derivation ("YYYY-MM-DD").
	Today string

	// The ledger tables (GL, Payment Ledger and Stock Ledger Entries) are
	// derived from the vouchers and written on first use, which keeps
	// creating a simulator cheap.
	lazyOnce  sync.Once
	lazyBuild func()
	lazyTypes map[string]bool

	ledgerOnce sync.Once
	ledgerIx   *ledgerIndex // report lookups (ledger_index.go)

	// base is set on a simulator's written copy (writes.go): tables and
	// child indexes it does not hold come from base, which is never
	// modified.
	base *Dataset
}

// ensure writes the derived ledger tables before doctype is read.
func (ds *Dataset) ensure(doctype string) {
	if ds.base != nil {
		ds.base.ensure(doctype)
		return
	}
	if ds.lazyTypes[doctype] {
		ds.lazyOnce.Do(func() {
			ds.lazyBuild()
			for dt := range ds.lazyTypes {
				sortByCollation(ds.tables[dt].rows)
			}
			ds.lazyBuild = nil
		})
	}
}

type docTable struct {
	rows   []*Doc // natural order: by name under the collation
	byName map[string]*Doc
}

// DocTypes lists every DocType the simulator serves, child tables included.
func (ds *Dataset) DocTypes() []string { return ds.meta.names() }

// Meta returns the field definition of a DocType, or nil if unknown.
func (ds *Dataset) Meta(doctype string) *DocMeta { return ds.meta.get(doctype) }

// List returns the documents of a DocType in the simulator's natural order
// (name ascending under the case-insensitive collation). Do not modify.
func (ds *Dataset) List(doctype string) []*Doc {
	ds.ensure(doctype)
	if t := ds.tables[doctype]; t != nil {
		return t.rows
	}
	if c, ok := ds.children[doctype]; ok || ds.base == nil {
		return c
	}
	return ds.base.List(doctype)
}

// Get returns one document by exact name (collation-insensitive lookup as
// MariaDB would do it), or nil.
func (ds *Dataset) Get(doctype, name string) *Doc {
	ds.ensure(doctype)
	t := ds.tables[doctype]
	if t == nil {
		if ds.base != nil {
			return ds.base.Get(doctype, name)
		}
		return nil
	}
	if d := t.byName[collationKey(name)]; d != nil {
		return d
	}
	return nil
}

// childRows returns child rows of childDoctype whose parent is p.
func childRowsOf(p *Doc, meta *DocMeta, childDoctype string) []*Doc {
	var out []*Doc
	for _, tf := range meta.TableFields() {
		if tf.Options == childDoctype {
			out = append(out, p.Children[tf.Name]...)
		}
	}
	return out
}

// newDataset creates an empty dataset with a table for every known
// non-child doctype.
func newDataset(reg *registry) *Dataset {
	ds := &Dataset{tables: map[string]*docTable{}, children: map[string][]*Doc{}, meta: reg}
	for _, n := range reg.names() {
		if !reg.get(n).IsTable {
			ds.tables[n] = &docTable{byName: map[string]*Doc{}}
		}
	}
	return ds
}

// add stores a document; call finish when all documents are added.
func (ds *Dataset) add(d *Doc) {
	t := ds.tables[d.DocType]
	if t == nil {
		panic("frappetest: no table for " + d.DocType)
	}
	key := collationKey(d.Name)
	if t.byName[key] != nil {
		panic("frappetest: duplicate " + d.DocType + " " + d.Name)
	}
	t.byName[key] = d
	t.rows = append(t.rows, d)
	ds.meta.get(d.DocType).noteSize(len(d.Fields))
}

// finish sorts tables into natural order and indexes child rows.
func (ds *Dataset) finish() {
	for _, n := range ds.meta.names() {
		t := ds.tables[n]
		if t == nil {
			continue
		}
		sortByCollation(t.rows)
		m := ds.meta.get(n)
		for _, tf := range m.TableFields() {
			for _, d := range t.rows {
				ds.children[tf.Options] = append(ds.children[tf.Options], d.Children[tf.Name]...)
			}
		}
	}
}

// sortByCollation stably sorts documents by name under the collation,
// computing each sort key once.
func sortByCollation(rows []*Doc) {
	keys := make([]string, len(rows))
	sorted := true
	for i, d := range rows {
		keys[i] = collationKey(d.Name)
		if i > 0 && keys[i] < keys[i-1] {
			sorted = false
		}
	}
	if sorted {
		return
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	out := make([]*Doc, len(rows))
	for i, j := range idx {
		out[i] = rows[j]
	}
	copy(rows, out)
}
