package acumaticatest

import (
	"strings"
	"testing"
	"time"
)

// renderAll serialises every record of every entity.
func renderAll(ds *Dataset) string {
	rn := &renderer{ep: endpoints()[Version24], base: "/entity/Default/24.200.001"}
	var b strings.Builder
	all := pathSet{}
	for _, e := range ds.Entities() {
		for name, f := range rn.ep.schema(e).Fields {
			if f.Kind != kindScalar {
				all[name] = pathSet{}
			}
		}
		for i, r := range ds.Records(e) {
			rn.top(&b, r, i+1, all, nil)
		}
	}
	for _, q := range ds.Inquiries() {
		for _, row := range q.Rows {
			for _, c := range q.Columns {
				b.WriteString(InquiryValue(row[c.Name]))
			}
		}
	}
	return b.String()
}

func TestDeterminism(t *testing.T) {
	a, b := renderAll(buildDataset(DefaultNow)), renderAll(buildDataset(DefaultNow))
	if a != b {
		t.Fatal("two builds with the same clock differ")
	}
	if c := renderAll(buildDataset(DefaultNow.AddDate(0, 1, 0))); c == a {
		t.Error("the data must follow Options.Now")
	}
}

// Documents are internally consistent, so connector tests can rely on
// totals computed from lines.
func TestDocumentArithmetic(t *testing.T) {
	ds := buildDataset(DefaultNow)
	for _, so := range ds.Records("SalesOrder") {
		var sum Decimal
		for _, l := range so.Detail("Details") {
			sum += l.Decimal("Amount")
			if l.Decimal("Amount") != l.Decimal("UnitPrice").Mul(l.Decimal("OrderQty"), 2) {
				t.Errorf("%s line amount", so.String("OrderNbr"))
			}
		}
		if so.Decimal("OrderTotal") != sum+so.Decimal("TaxTotal") {
			t.Errorf("%s total", so.String("OrderNbr"))
		}
	}
	paid := map[string]Decimal{}
	for _, p := range ds.Records("Payment") {
		for _, l := range p.Detail("DocumentsToApply") {
			paid[l.String("ReferenceNbr")] += l.Decimal("AmountPaid")
		}
	}
	for _, inv := range ds.Records("Invoice") {
		if inv.String("Type") != "Invoice" || inv.String("Status") == "On Hold" {
			continue
		}
		if inv.Decimal("Amount")-inv.Decimal("Balance") != paid[inv.String("ReferenceNbr")] {
			t.Errorf("%s: amount %s balance %s paid %s", inv.String("ReferenceNbr"), inv.Decimal("Amount"), inv.Decimal("Balance"), paid[inv.String("ReferenceNbr")])
		}
	}
	for _, jt := range ds.Records("JournalTransaction") {
		var dr, cr Decimal
		for _, l := range jt.Detail("Details") {
			dr += l.Decimal("DebitAmount")
			cr += l.Decimal("CreditAmount")
		}
		if dr != cr {
			t.Errorf("batch %s unbalanced", jt.String("BatchNbr"))
		}
	}
	for _, e := range ds.Entities() {
		for _, r := range ds.Records(e) {
			for _, f := range []string{"CreatedDateTime", "LastModifiedDateTime", "Date"} {
				if tm := r.Time(f); tm.After(DefaultNow.Add(time.Hour * 24 * 60)) {
					t.Errorf("%s %s %s in the future: %s", e, r.ID, f, tm)
				}
			}
		}
	}
}
