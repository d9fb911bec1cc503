package frappetest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dataSeed fixes the generated data; changing it changes every document.
const dataSeed = 0x45524750_47415445 // "ERPGGATE"

// defaultToday is the "today" used when Options.Now is nil.
var defaultToday = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)

// dataStart and dataEnd bound the generated transaction dates.
var (
	dataStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	dataEnd   = time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
)

// generator builds a Dataset in stages (setup, parties, items, selling).
// Later stages (purchasing, payments, ledgers) read what earlier stages
// stored: e.g. a GL stage can walk submitted invoices and their accounts.
type generator struct {
	ds    *Dataset
	reg   *registry
	rng   *rng
	today time.Time

	companies []*companyInfo
	customers []*customerInfo
	items     []*itemInfo
}

// buildDataset generates the complete deterministic dataset.
func buildDataset(reg *registry, today time.Time) *Dataset {
	g := &generator{
		ds:    newDataset(reg),
		reg:   reg,
		rng:   newRNG(dataSeed),
		today: time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC),
	}
	g.ds.Today = fmtDate(g.today)
	g.genSetup()
	g.genCustomers()
	g.genItems()
	g.genSalesInvoices()
	g.genSalesOrders()
	g.ds.finish()
	return g.ds
}

// newDoc creates a document with Frappe's insert-time defaults: numeric
// columns 0 (or their static default), Check/Select/Data static defaults,
// standard columns, and an empty list for every table field.
func (g *generator) newDoc(doctype, name, owner string, created time.Time) *Doc {
	m := g.reg.get(doctype)
	if m == nil {
		panic("frappetest: unknown doctype " + doctype)
	}
	d := &Doc{DocType: doctype, Name: name, Fields: map[string]any{}, Children: map[string][]*Doc{}}
	for _, f := range m.DataFields() {
		if v := staticDefault(f); v != nil {
			d.Fields[f.Name] = v
		}
	}
	for _, tf := range m.TableFields() {
		d.Children[tf.Name] = []*Doc{}
	}
	ts := fmtDatetime(created)
	d.Fields["owner"] = owner
	d.Fields["creation"] = ts
	d.Fields["modified"] = ts
	d.Fields["modified_by"] = owner
	d.Fields["docstatus"] = int64(0)
	d.Fields["idx"] = int64(0)
	return d
}

// staticDefault returns the stored value of a new field or nil (NULL).
func staticDefault(f *Field) any {
	def := f.Default
	dynamic := def == "" || def == "Today" || strings.HasPrefix(def, ":") || strings.HasPrefix(def, "{")
	switch {
	case f.Type == "Check" || f.Type == "Int":
		if !dynamic {
			if n, err := strconv.ParseInt(def, 10, 64); err == nil {
				return n
			}
		}
		return int64(0)
	case f.IsDecimal() || f.Type == "Duration":
		if !dynamic {
			if v, ok := parseDecimal(def); ok {
				return v
			}
		}
		if f.Type == "Duration" {
			return int64(0)
		}
		return Decimal(0)
	case dynamic:
		return nil
	}
	return def
}

// addChild appends a child row to table field tf of parent.
func (g *generator) addChild(parent *Doc, tf string, values map[string]any) *Doc {
	pm := g.reg.get(parent.DocType)
	f := pm.Field(tf)
	if f == nil || !f.IsTable() {
		panic(fmt.Sprintf("frappetest: %s has no table %s", parent.DocType, tf))
	}
	created, _ := time.Parse("2006-01-02 15:04:05.000000", parent.Str("creation"))
	c := g.newDoc(f.Options, g.rng.hash(10), parent.Str("owner"), created)
	c.Children = nil
	c.Fields["creation"] = parent.Fields["creation"]
	c.Fields["modified"] = parent.Fields["modified"]
	c.Fields["modified_by"] = parent.Fields["modified_by"]
	c.Fields["parent"] = parent.Name
	c.Fields["parentfield"] = tf
	c.Fields["parenttype"] = parent.DocType
	c.Fields["idx"] = int64(len(parent.Children[tf]) + 1)
	for k, v := range values {
		c.Fields[k] = v
	}
	parent.Children[tf] = append(parent.Children[tf], c)
	return c
}

// setDocstatus sets docstatus on a document and all of its child rows.
func setDocstatus(d *Doc, ds int64) {
	d.Fields["docstatus"] = ds
	for _, rows := range d.Children {
		for _, c := range rows {
			c.Fields["docstatus"] = ds
		}
	}
}

// setModified sets modified on a document and its child rows.
func setModified(d *Doc, t time.Time) {
	ts := fmtDatetime(t)
	d.Fields["modified"] = ts
	for _, rows := range d.Children {
		for _, c := range rows {
			c.Fields["modified"] = ts
		}
	}
}

func fmtDate(t time.Time) string { return t.Format("2006-01-02") }

// fmtDatetime renders like Python str(datetime): microseconds only when
// non-zero.
func fmtDatetime(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04:05.000000")
}

// fmtTime renders a time of day like Frappe's format_timedelta: the hour is
// not zero-padded.
func fmtTime(h, m, s, us int) string {
	out := fmt.Sprintf("%d:%02d:%02d", h, m, s)
	if us != 0 {
		out += fmt.Sprintf(".%06d", us)
	}
	return out
}

// at returns day d at a deterministic office-hours time.
func (g *generator) at(d time.Time) time.Time {
	return d.Add(time.Duration(g.rng.between(8*3600, 17*3600))*time.Second +
		time.Duration(g.rng.intn(1_000_000))*time.Microsecond)
}

// roundHalfEven divides n by d (d > 0) rounding half to even, like Frappe's
// default "Banker's Rounding (legacy)".
func roundHalfEven(n, d int64) int64 {
	neg := n < 0
	if neg {
		n = -n
	}
	q, r := n/d, n%d
	switch {
	case 2*r > d, 2*r == d && q%2 == 1:
		q++
	}
	if neg {
		return -q
	}
	return q
}
