package acumaticatest

import (
	"fmt"
	"testing"
	"time"
)

// checkRecord verifies every stored field exists in the schema with a Go
// value of the wrapper's type.
func checkRecord(t *testing.T, ep *endpointSchema, r *Record, where string) {
	t.Helper()
	es := ep.schema(r.Entity)
	if es == nil {
		t.Errorf("%s: unknown schema %s", where, r.Entity)
		return
	}
	for name, v := range r.Fields {
		f := es.Fields[name]
		if f == nil || f.Kind != kindScalar {
			t.Errorf("%s: %s.%s is not a scalar field of the schema", where, r.Entity, name)
			continue
		}
		ok := false
		switch v.(type) {
		case string:
			ok = f.Type == tString || f.Type == tGuid
		case int64:
			ok = f.Type == tInt || f.Type == tShort || f.Type == tLong || f.Type == tByte
		case bool:
			ok = f.Type == tBool
		case Decimal:
			ok = f.Type == tDecimal || f.Type == tDouble
		case time.Time:
			ok = f.Type == tDateTime
		}
		if !ok {
			t.Errorf("%s: %s.%s holds %T for %s", where, r.Entity, name, v, f.Type)
		}
	}
	for coll, lines := range r.Details {
		f := es.Fields[coll]
		if f == nil || f.Kind != kindDetail {
			t.Errorf("%s: %s.%s is not a detail collection", where, r.Entity, coll)
			continue
		}
		for i, l := range lines {
			if l.Entity != f.Ref {
				t.Errorf("%s: %s.%s line is %s, want %s", where, r.Entity, coll, l.Entity, f.Ref)
			}
			checkRecord(t, ep, l, fmt.Sprintf("%s/%s[%d]", where, coll, i))
		}
	}
	for name, l := range r.Linked {
		f := es.Fields[name]
		if f == nil || f.Kind != kindLinked || l.Entity != f.Ref {
			t.Errorf("%s: %s.%s is not a linked %s", where, r.Entity, name, l.Entity)
			continue
		}
		checkRecord(t, ep, l, where+"/"+name)
	}
}

func TestDatasetConformsToSchema(t *testing.T) {
	ds := buildDataset(DefaultNow)
	ep := endpoints()[Version24]
	for _, e := range ds.Entities() {
		for _, r := range ds.Records(e) {
			checkRecord(t, ep, r, e+"/"+r.ID)
			for _, k := range KeyFields(e) {
				if keyString(r.Fields[k]) == "" {
					t.Errorf("%s %s: empty key %s", e, r.ID, k)
				}
			}
		}
	}
}

func TestDatasetCoverage(t *testing.T) {
	ds := buildDataset(DefaultNow)
	min := map[string]int{"Customer": 50, "Vendor": 30, "StockItem": 200, "SalesOrder": 300, "Invoice": 300, "Bill": 200}
	for e, n := range min {
		if got := len(ds.Records(e)); got < n {
			t.Errorf("%s: %d records, want ≥ %d", e, got, n)
		}
	}
	for _, b := range ds.Records("Bill") {
		if len(b.Detail("Details")) == 0 {
			t.Errorf("bill %s has no lines", b.String("ReferenceNbr"))
		}
	}
	ents := ds.Entities()
	if len(ents) < 38 {
		t.Errorf("%d entities with data, want ≥ 38: %v", len(ents), ents)
	}
	modules := map[string]bool{}
	for _, e := range ents {
		modules[Screen(e)[:2]] = true
	}
	if len(modules) < 10 {
		t.Errorf("entities span %d form prefixes, want ≥ 10: %v", len(modules), modules)
	}
}
