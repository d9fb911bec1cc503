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

// genOptions scale the generated data (see Options).
type genOptions struct {
	extraSalesInvoices int
	// extraCustomers are added after every seeded document (genExtraCustomers).
	extraCustomers []string
	// extraCustomerCurrency is their default currency ("" is NZD).
	extraCustomerCurrency string
}

// generator builds a Dataset in stages (setup, parties, items, selling,
// then buying, payments, stock, ledgers and banking). Later stages read
// what earlier stages stored: e.g. the ledger stage walks submitted
// invoices and their accounts.
type generator struct {
	ds    *Dataset
	reg   *registry
	rng   *rng
	today time.Time
	opts  genOptions

	companies []*companyInfo
	customers []*customerInfo
	items     []*itemInfo

	suppliers    []*supplierInfo
	projects     []*Doc
	bankAccounts map[string]*Doc // company name -> its Bank Account
	stock        *stockResult    // per voucher line stock values
}

// buildDataset generates the complete deterministic dataset. The selling
// stages share one random stream (their output predates the later
// stages); every later stage draws from its own named stream, so adding or
// scaling one stage never changes the documents of another.
func buildDataset(reg *registry, today time.Time, opts genOptions) *Dataset {
	g := &generator{
		ds:    newDataset(reg),
		reg:   reg,
		rng:   newRNG(dataSeed),
		today: time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC),
		opts:  opts,
	}
	g.ds.Today = fmtDate(g.today)
	g.genSetup()
	g.genCustomers()
	g.genItems()
	g.genSalesInvoices()
	g.genSalesOrders()
	g.stage("buying-masters", g.genBuyingMasters)
	g.stage("banking-masters", g.genBankingMasters)
	g.stage("more-items", g.genMoreItems)
	g.stage("projects", g.genProjects)
	g.stage("extra-sales", g.genExtraSalesInvoices)
	g.stage("purchasing", g.genPurchasing)
	g.stage("payments", g.genPayments)
	g.stage("journals", g.genOpeningJournals)
	g.stage("stock", g.genStock)
	g.stage("banking", g.genBankTransactions)
	g.stage("bins", g.genBinsAndReorderLevels)
	g.stage("extra-customers", g.genExtraCustomers)
	g.ds.finish()
	// The ledgers only read the finished vouchers, so they are written
	// when first needed (Dataset.ensure).
	g.ds.lazyTypes = map[string]bool{"GL Entry": true, "Payment Ledger Entry": true, "Stock Ledger Entry": true}
	g.ds.lazyBuild = func() {
		g.stage("ledger", g.genLedgers)
		g.stage("stock-ledger", g.genStockLedgerEntries)
	}
	return g.ds
}

// stage runs fn with the random stream named name.
func (g *generator) stage(name string, fn func()) {
	saved := g.rng
	g.rng = newRNG(streamSeed(name))
	fn()
	g.rng = saved
}

// streamSeed derives a stream seed from the data seed and a stage name
// (FNV-1a).
func streamSeed(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return dataSeed ^ h
}

// newDoc creates a document with Frappe's insert-time defaults: numeric
// columns 0 (or their static default), Check/Select/Data static defaults,
// standard columns, and an empty list for every table field.
func (g *generator) newDoc(doctype, name, owner string, created time.Time) *Doc {
	return g.newDocAt(doctype, name, owner, fmtDatetime(created))
}

// newDocAt is newDoc with the creation timestamp already formatted.
func (g *generator) newDocAt(doctype, name, owner, ts string) *Doc {
	m := g.reg.get(doctype)
	if m == nil {
		panic("frappetest: unknown doctype " + doctype)
	}
	d := &Doc{DocType: doctype, Name: name, Fields: make(map[string]any, max(int(m.sizeHint.Load()), 8)),
		Children: make(map[string][]*Doc, len(m.tableFields)), defaults: m.template}
	for _, tf := range m.tableFields {
		d.Children[tf.Name] = []*Doc{}
	}
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

// addChild appends a child row to table field tf of parent. The row keeps
// values as its field map (callers pass a fresh map) and gets the standard
// columns it does not set itself.
func (g *generator) addChild(parent *Doc, tf string, values map[string]any) *Doc {
	pm := g.reg.get(parent.DocType)
	f := pm.Field(tf)
	if f == nil || !f.IsTable() {
		panic(fmt.Sprintf("frappetest: %s has no table %s", parent.DocType, tf))
	}
	m := g.reg.get(f.Options)
	if m == nil {
		panic("frappetest: unknown doctype " + f.Options)
	}
	if values == nil {
		values = map[string]any{}
	}
	c := &Doc{DocType: f.Options, Name: g.rng.hash(10), Fields: values, defaults: m.template}
	for _, kv := range [...]struct {
		k string
		v any
	}{
		{"owner", parent.Fields["owner"]}, {"creation", parent.Fields["creation"]},
		{"modified", parent.Fields["modified"]}, {"modified_by", parent.Fields["modified_by"]},
		{"docstatus", int64(0)}, {"idx", int64(len(parent.Children[tf]) + 1)},
		{"parent", parent.Name}, {"parentfield", tf}, {"parenttype", parent.DocType},
	} {
		if _, set := values[kv.k]; !set {
			values[kv.k] = kv.v
		}
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
