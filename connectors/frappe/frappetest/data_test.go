package frappetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestDeterministicData(t *testing.T) {
	// Generate twice, bypassing the shared dataset cache.
	regA, regB := newRegistry(), newRegistry()
	a := &Simulator{reg: regA, data: buildDataset(regA, defaultToday, genOptions{})}
	b := &Simulator{reg: regB, data: buildDataset(regB, defaultToday, genOptions{})}
	if NewHandler(Options{}).Data() != NewHandler(Options{}).Data() {
		t.Error("simulators with the same options should share their dataset")
	}
	for _, dt := range a.Data().DocTypes() {
		la, lb := a.Data().List(dt), b.Data().List(dt)
		if len(la) != len(lb) {
			t.Fatalf("%s: %d vs %d docs", dt, len(la), len(lb))
		}
		for i := range la {
			if la[i].DocType != lb[i].DocType {
				continue
			}
			ja := pyJSON(docAsDict(a.reg, la[i], false))
			jb := pyJSON(docAsDict(b.reg, lb[i], false))
			if string(ja) != string(jb) {
				t.Fatalf("%s %s differs", dt, la[i].Name)
			}
		}
	}
}

func TestDatasetShape(t *testing.T) {
	ds := NewHandler(Options{}).Data()
	counts := map[string]int{"Company": 3, "Customer": 60, "Fiscal Year": 2, "Sales Invoice": 400, "Supplier": 36,
		"Purchase Order": 96, "Project": 12, "Bank Account": 3, "Journal Entry": 3}
	for dt, n := range counts {
		if got := len(ds.List(dt)); got != n {
			t.Errorf("%s: %d docs, want %d", dt, got, n)
		}
	}
	if len(ds.List("Item")) < 40 || len(ds.List("Sales Order")) < 100 {
		t.Error("items / sales orders too few")
	}
	statuses := map[string]int{}
	currencies := map[string]bool{}
	for _, d := range ds.List("Sales Invoice") {
		statuses[d.Str("status")]++
		currencies[d.Str("company")+"/"+d.Str("currency")] = true
		n := len(d.Table("items"))
		if n < 1 || n > 6 {
			t.Fatalf("%s has %d items", d.Name, n)
		}
		// Totals are exact to the cent and consistent.
		var net int64
		for _, it := range d.Table("items") {
			net += it.Dec("amount").Cents()
			if it.Dec("amount") != Cents(it.Dec("amount").Cents()) {
				t.Fatalf("%s amount not in cents", d.Name)
			}
		}
		var tax int64
		for _, tx := range d.Table("taxes") {
			tax += tx.Dec("tax_amount").Cents()
		}
		if net != d.Dec("net_total").Cents() || net+tax != d.Dec("grand_total").Cents() {
			t.Fatalf("%s totals inconsistent", d.Name)
		}
		if d.Int("is_return") == 1 && (d.Dec("grand_total") >= 0 || !strings.HasPrefix(d.Name, "ACC-SINV-RET-")) {
			t.Fatalf("%s return shape", d.Name)
		}
		if d.Str("posting_date") < "2025-01-01" || d.Str("posting_date") > "2026-06-15" {
			t.Fatalf("%s date %s", d.Name, d.Str("posting_date"))
		}
	}
	for _, st := range []string{"Draft", "Paid", "Overdue", "Cancelled", "Return", "Partly Paid", "Unpaid"} {
		if statuses[st] == 0 {
			t.Errorf("no %s invoices: %v", st, statuses)
		}
	}
	if !currencies["Demo Holdings NZ Ltd/NZD"] || !currencies["Demo Holdings NZ Ltd/USD"] {
		t.Errorf("NZ company needs NZD and USD invoices: %v", currencies)
	}
	for _, want := range []string{"Harbour Freight Ltd", "Harbour Freight Logistics", "Müller Maschinenbau GmbH", "Pioneer Software LLC"} {
		if ds.Get("Customer", want) == nil {
			t.Errorf("customer %s missing", want)
		}
	}
	disabled := 0
	for _, c := range ds.List("Customer") {
		disabled += int(c.Int("disabled"))
	}
	if disabled < 2 {
		t.Error("want disabled customers")
	}
}

// TestStatusFollowsNow checks the status rules independently: with "today"
// before every due date nothing is overdue; with a far future date every
// open invoice is.
func TestStatusFollowsNow(t *testing.T) {
	early := NewHandler(Options{Now: func() time.Time { return time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC) }}).Data()
	late := NewHandler(Options{Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }}).Data()
	for i, d := range early.List("Sales Invoice") {
		l := late.List("Sales Invoice")[i]
		if d.Dec("outstanding_amount") != l.Dec("outstanding_amount") {
			t.Fatal("payments must not depend on Now")
		}
		if d.Int("docstatus") != 1 || d.Int("is_return") == 1 {
			continue
		}
		out := d.Dec("outstanding_amount").Cents()
		total := partyTotal(d)
		switch {
		case out <= 0:
			if st := l.Str("status"); st != "Paid" && st != "Credit Note Issued" {
				t.Errorf("%s settled but %s", d.Name, st)
			}
		default:
			if l.Str("status") != "Overdue" {
				t.Errorf("%s open in 2030 but %s", d.Name, l.Str("status"))
			}
			want := "Unpaid"
			if out < total {
				want = "Partly Paid"
			}
			if d.Str("status") != want {
				t.Errorf("%s in 2024: %s want %s", d.Name, d.Str("status"), want)
			}
		}
	}
}

func TestJSONEncoding(t *testing.T) {
	o := newObject(3)
	o.set("a", Cents(118000))
	o.set("b", "Café <&> \"q\" 😀")
	o.set("c", []any{int64(1), nil, 0.5})
	o.set("a", Cents(5)) // replaced in place, like a dict
	got := string(pyJSON(o))
	want := `{"a":0.05,"b":"Caf\u00e9 <&> \"q\" \ud83d\ude00","c":[1,null,0.5]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["b"] != "Café <&> \"q\" 😀" {
		t.Fatal("round trip")
	}
	if moneyInWords(118050, "NZD") != "NZD One Thousand, One Hundred And Eighty and Fifty Cent only." {
		t.Fatal(moneyInWords(118050, "NZD"))
	}
}
