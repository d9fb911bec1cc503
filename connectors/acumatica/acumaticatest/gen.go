package acumaticatest

import (
	"crypto/sha1"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// gen builds the demo company. Every module draws from its own seeded
// generator, so the data depends only on Options.Now.
type gen struct {
	ds  *Dataset
	now time.Time
	rng *rand.Rand

	customers, vendors, stockItems, nonStockItems []*Record
	warehouses, employees, salespersons, projects []*Record
	salesOrders, invoices, bills                  []*Record
	contactSeq                                    int64
}

func buildDataset(now time.Time) *Dataset {
	g := &gen{ds: newDataset(now), now: now.UTC()}
	g.module("organisation", g.genOrganisation)
	g.module("finance", g.genFinance)
	g.module("inventory", g.genInventory)
	g.module("receivables-masters", g.genCustomers)
	g.module("payables-masters", g.genVendors)
	g.module("crm", g.genCRM)
	g.module("projects", g.genProjects)
	g.module("sales", g.genSales)
	g.module("receivables", g.genReceivables)
	g.module("purchasing", g.genPurchasing)
	g.module("payables", g.genPayables)
	g.module("inventory-documents", g.genInventoryDocuments)
	g.module("time-expenses", g.genTimeAndExpenses)
	g.module("journal", g.genJournal)
	g.module("crm-activities", g.genActivities)
	g.module("field-services", g.genFieldServices)
	g.module("project-transactions", g.genProjectTransactions)
	for _, t := range g.ds.tables {
		t.sort()
	}
	g.ds.inquiries = buildInquiries(g)
	return g.ds
}

func (g *gen) module(name string, f func()) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	g.rng = rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
	f()
}

// guid derives a stable GUID from a seed, formatted like Acumatica's
// NoteIDs.
func guid(seed string) string {
	s := sha1.Sum([]byte("acumaticatest:" + seed))
	return fmt.Sprintf("%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
}

// top creates a top-level record with its id and NoteID, and the audit
// date-times where the entity has them.
func (g *gen) top(entity string, key string, created time.Time) *Record {
	id := guid(entity + "/" + key)
	r := newRecord(entity, id)
	es := endpoints()[Version24].schema(entity)
	if es.field("NoteID") != nil {
		r.set("NoteID", id)
	}
	modified := created.Add(time.Duration(g.rng.IntN(72*3600)) * time.Second)
	if modified.After(g.now) {
		modified = g.now.Add(-time.Hour)
	}
	if es.field("CreatedDateTime") != nil {
		r.set("CreatedDateTime", created)
	}
	for _, f := range []string{"LastModifiedDateTime", "LastModified"} {
		if es.field(f) != nil {
			r.set(f, modified)
		}
	}
	return r
}

// line creates a detail line of parent with a stable id.
func (g *gen) line(parent *Record, collection, schema string, n int) *Record {
	l := newRecord(schema, guid(fmt.Sprintf("%s/%s/%d", parent.ID, collection, n)))
	parent.addDetail(collection, l)
	return l
}

// linked creates a linked entity of parent with a stable id.
func (g *gen) linked(parent *Record, name, schema string) *Record {
	l := newRecord(schema, guid(parent.ID+"/"+name))
	parent.link(name, l)
	return l
}

// stamp returns a date-time in the past: days ago, at a pseudo-random
// time of day with millisecond precision.
func (g *gen) stamp(daysAgo int) time.Time {
	d := g.now.AddDate(0, 0, -daysAgo)
	day := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	t := day.Add(time.Duration(8*3600+g.rng.IntN(9*3600))*time.Second + time.Duration(g.rng.IntN(1000))*time.Millisecond)
	if t.After(g.now) {
		t = g.now.Add(-time.Duration(1+g.rng.IntN(3600)) * time.Second)
	}
	return t
}

// day returns midnight of the day daysAgo before now.
func (g *gen) day(daysAgo int) time.Time {
	d := g.now.AddDate(0, 0, -daysAgo)
	return date(d.Year(), d.Month(), d.Day())
}

func (g *gen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *gen) pickRec(list []*Record) *Record { return list[g.rng.IntN(len(list))] }

// cents returns a random amount between lo and hi whole units, in cents.
func (g *gen) cents(lo, hi int) Decimal {
	return DecimalFromCents(int64(lo*100 + g.rng.IntN((hi-lo)*100+1)))
}

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

// address fills an Address sub-entity.
func (g *gen) address(parent *Record, name string, seq int) *Record {
	a := g.linked(parent, name, "Address")
	c := cities[seq%len(cities)]
	a.set("AddressLine1", fmt.Sprintf("%d %s", 10+seq*7%890, streets[seq%len(streets)]))
	if seq%4 == 0 {
		a.set("AddressLine2", fmt.Sprintf("Suite %d", 100+seq%50))
	}
	a.set("City", c[0]).set("State", c[1]).set("PostalCode", c[2]).set("Country", "US").set("Validated", seq%3 != 0)
	return a
}

var (
	companyWords1 = []string{"Acme", "Blue Ridge", "Cascade", "Summit", "Harbor", "Northwind", "Granite",
		"Silver Lake", "Redwood", "Pioneer", "Evergreen", "Beacon", "Frontier", "Lakeside", "Meridian"}
	companyWords2 = []string{"Supply", "Foods", "Outfitters", "Electronics", "Logistics", "Builders",
		"Trading", "Bakery", "Motors", "Medical", "Furniture", "Hardware"}
	companySuffix = []string{"Inc.", "LLC", "Co.", "Ltd.", "Group"}
	firstNames    = []string{"Alice", "Brian", "Carla", "David", "Elena", "Frank", "Grace", "Henry",
		"Irene", "James", "Karen", "Louis", "Maria", "Nathan", "Olivia", "Peter", "Quinn", "Rachel", "Samuel", "Tina"}
	lastNames = []string{"Anderson", "Brooks", "Carter", "Diaz", "Evans", "Fischer", "Garcia", "Hughes",
		"Ito", "Johnson", "Kim", "Lopez", "Miller", "Nguyen", "Owens", "Patel", "Reyes", "Smith", "Turner", "Walker"}
	streets = []string{"Main St", "Oak Ave", "Pine Rd", "Maple Dr", "Cedar Ln", "Elm St", "Lake Blvd", "Hill Rd"}
	cities  = [][3]string{{"New York", "NY", "10001"}, {"Seattle", "WA", "98101"}, {"Austin", "TX", "73301"},
		{"Denver", "CO", "80202"}, {"Chicago", "IL", "60601"}, {"Boston", "MA", "02108"},
		{"San Diego", "CA", "92101"}, {"Portland", "OR", "97201"}, {"Atlanta", "GA", "30301"}}
)

func (g *gen) companyName(i int) string {
	return fmt.Sprintf("%s %s %s", companyWords1[i%len(companyWords1)],
		companyWords2[(i/len(companyWords1)+i)%len(companyWords2)], companySuffix[i%len(companySuffix)])
}

func personName(i int) (first, last string) {
	return firstNames[i%len(firstNames)], lastNames[(i*7+i/len(firstNames))%len(lastNames)]
}
