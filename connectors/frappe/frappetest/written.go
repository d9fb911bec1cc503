package frappetest

import (
	"maps"
	"time"
)

// A simulator's writes never touch the shared seeded Dataset. Each write
// builds a new overlay: a Dataset whose tables hold only the DocTypes
// written so far (copies), falling through to the seeded base for the
// rest, and the simulator swaps it in whole. Readers keep whichever
// snapshot they started with, so a read never sees half a write.

// dataset returns the simulator's current data: the seeded Dataset with
// its writes on top.
func (s *Simulator) dataset() *Dataset { return s.cur.Load() }

// withDoc returns a copy of ds in which d is stored (added, or replacing
// the document of the same DocType and name).
func (ds *Dataset) withDoc(d *Doc) *Dataset {
	root := ds
	if ds.base != nil {
		root = ds.base
	}
	next := &Dataset{tables: maps.Clone(ds.tables), children: maps.Clone(ds.children), meta: ds.meta, Today: ds.Today, base: root}
	if ds.base == nil {
		next.tables, next.children = map[string]*docTable{}, map[string][]*Doc{}
	}
	old := ds.tables[d.DocType]
	if old == nil {
		old = root.tables[d.DocType]
	}
	t := &docTable{byName: maps.Clone(old.byName), rows: make([]*Doc, 0, len(old.rows)+1)}
	key := collationKey(d.Name)
	prev := t.byName[key]
	for _, r := range old.rows {
		if r != prev {
			t.rows = append(t.rows, r)
		}
	}
	t.rows = append(t.rows, d)
	sortByCollation(t.rows)
	t.byName[key] = d
	next.tables[d.DocType] = t
	m := ds.meta.get(d.DocType)
	for _, tf := range m.TableFields() {
		child := tf.Options
		src, ok := ds.children[child]
		if !ok {
			src = root.children[child]
		}
		rows := make([]*Doc, 0, len(src)+len(d.Children[tf.Name]))
		for _, c := range src {
			if prev == nil || c.Str("parent") != prev.Name || c.Str("parentfield") != tf.Name {
				rows = append(rows, c)
			}
		}
		next.children[child] = append(rows, d.Children[tf.Name]...)
	}
	return next
}

// clone copies a document deeply enough to change its fields and rows.
func (d *Doc) clone() *Doc {
	c := &Doc{DocType: d.DocType, Name: d.Name, Fields: maps.Clone(d.Fields), Children: make(map[string][]*Doc, len(d.Children)), defaults: d.defaults}
	for k, rows := range d.Children {
		out := make([]*Doc, len(rows))
		for i, r := range rows {
			out[i] = &Doc{DocType: r.DocType, Name: r.Name, Fields: maps.Clone(r.Fields), defaults: r.defaults}
		}
		c.Children[k] = out
	}
	return c
}

// stamp returns a fresh modified timestamp, later than every one this
// simulator has handed out (Frappe's modified is the save's now()).
func (s *Simulator) stamp() string {
	t := time.Now().UTC().Truncate(time.Microsecond)
	if !t.After(s.lastStamp) {
		t = s.lastStamp.Add(time.Microsecond)
	}
	s.lastStamp = t
	return t.Format("2006-01-02 15:04:05.000000")
}
