package frappetest

import (
	"strings"
	"testing"
)

// The purchasing, banking, stock and ledger doctypes through the REST API.

func TestSuppliersAndBuyingMasters(t *testing.T) {
	s := testServer(t)
	r := admin(t, s, "/api/resource/Supplier", map[string]string{"fields": `["name","supplier_group","default_currency"]`, "limit_page_length": "0"})
	r.expectStatus(t, 200)
	rows := r.rows(t)
	if len(rows) < 30 {
		t.Fatalf("%d suppliers", len(rows))
	}
	suffixes := map[string]int{}
	for _, row := range rows {
		name := row["name"].(string)
		for _, sfx := range []string{" Ltd", " Limited", " Pty Ltd", " Inc", " LLC", " GmbH"} {
			if strings.HasSuffix(name, sfx) {
				suffixes[sfx]++
			}
		}
	}
	if len(suffixes) < 6 {
		t.Errorf("legal suffixes %v", suffixes)
	}
	// Names that normalise to the same words exist.
	for _, n := range []string{"Southern Cross Metals Ltd", "Southern Cross Metals Limited", "Acme Industrial Supply Inc", "Acme Industrial Supply LLC"} {
		admin(t, s, "/api/resource/Supplier/"+n, nil).expectStatus(t, 200)
	}
	r = admin(t, s, "/api/resource/Supplier Group", map[string]string{"filters": `[["is_group","=",0]]`})
	if len(r.rows(t)) != len(supplierGroups) {
		t.Fatalf("supplier groups %s", r.raw)
	}
	// Sales users may not read buying documents.
	call(t, s, tokenAuth(s.User("no-accounting")), "/api/resource/Purchase Order", nil).expectStatus(t, 403)
}

func TestPurchaseDocumentsOverREST(t *testing.T) {
	s := testServer(t)
	r := admin(t, s, "/api/resource/Purchase Order", map[string]string{
		"fields": `["name","status","per_received"]`, "filters": `[["docstatus","=",1],["per_received","<",100],["status","not in",["Closed","On Hold"]]]`,
		"limit_page_length": "0"})
	pending := r.rows(t)
	if len(pending) == 0 {
		t.Fatal("no purchase orders pending receipt")
	}
	for _, p := range pending {
		if p["status"] != "To Receive and Bill" {
			t.Fatalf("pending order %v", p)
		}
	}
	var pi *Doc
	for _, d := range s.Data().List("Purchase Invoice") {
		if d.Int("update_stock") == 1 && d.Int("docstatus") == 1 && d.Int("is_return") == 0 {
			pi = d
			break
		}
	}
	r = admin(t, s, "/api/resource/Purchase Invoice/"+pi.Name, nil)
	r.expectStatus(t, 200)
	doc := r.body["data"].(map[string]any)
	items := doc["items"].([]any)
	if doc["bill_no"] == nil || doc["party_account_currency"] == nil || doc["credit_to"] == nil || len(items) == 0 ||
		items[0].(map[string]any)["purchase_order"] == nil || items[0].(map[string]any)["valuation_rate"] == nil {
		t.Fatalf("purchase invoice %.500s", r.raw)
	}
}

func TestPaymentAndBankDocumentsOverREST(t *testing.T) {
	s := testServer(t)
	var pe *Doc
	for _, d := range s.Data().List("Payment Entry") {
		if d.Int("docstatus") == 1 && len(d.Table("references")) > 1 {
			pe = d
			break
		}
	}
	r := admin(t, s, "/api/resource/Payment Entry/"+pe.Name, nil)
	refs := r.body["data"].(map[string]any)["references"].([]any)
	if len(refs) < 2 || refs[0].(map[string]any)["reference_doctype"] != "Sales Invoice" && refs[0].(map[string]any)["reference_doctype"] != "Purchase Invoice" {
		t.Fatalf("payment references %.400s", r.raw)
	}
	r = admin(t, s, "/api/resource/Bank Transaction", map[string]string{
		"fields": `["name","status","payment_entries.payment_entry"]`, "filters": `[["status","=","Reconciled"]]`, "limit_page_length": "5"})
	for _, row := range r.rows(t) {
		if row["payment_entry"] == nil {
			t.Fatalf("reconciled bank line without a payment: %v", row)
		}
	}
	// Child tables need their parent doctype.
	r = admin(t, s, "/api/resource/Item Reorder", map[string]string{"parent": "Item", "fields": `["parent","warehouse","warehouse_reorder_level"]`, "limit_page_length": "0"})
	if len(r.rows(t)) < 10 {
		t.Fatalf("item reorder rows %s", r.raw)
	}
	r = admin(t, s, "/api/resource/Bin", map[string]string{"fields": `["count(name) as n"]`})
	if r.rows(t)[0]["n"] == json0 {
		t.Fatal("no bins")
	}
}

func TestLedgerDoctypesOverREST(t *testing.T) {
	s := newServer(t, Options{})
	nz := tokenAuth(s.User("one-company"))
	r := call(t, s, nz, "/api/resource/GL Entry", map[string]string{"fields": `["company","sum(debit) as dr","sum(credit) as cr"]`,
		"filters": `[["is_cancelled","=",0]]`, "group_by": "company"})
	rows := r.rows(t)
	if len(rows) != 1 || rows[0]["company"] != nzCompany || rows[0]["dr"] != rows[0]["cr"] {
		t.Fatalf("one-company GL sums %v", rows)
	}
	all := call(t, s, nz, "/api/method/frappe.client.get_count", map[string]string{"doctype": "GL Entry"})
	if all.body["message"] != jsonNumber(itoaPad(len(s.Data().List("GL Entry")), 1)) {
		t.Fatalf("client.get_count %v", all.body["message"])
	}
	for _, dt := range []string{"Payment Ledger Entry", "Stock Ledger Entry"} {
		call(t, s, nz, "/api/resource/"+dt, nil).expectStatus(t, 200)
		call(t, s, tokenAuth(s.User("no-accounting")), "/api/resource/"+dt, nil).expectStatus(t, 403)
	}
}

func TestExtraSalesInvoicesKeepSeededDocuments(t *testing.T) {
	const extra = 120
	base := testServer(t).Data()
	s := newServer(t, Options{ExtraSalesInvoices: extra})
	ds := s.Data()
	if got := len(ds.List("Sales Invoice")); got != salesInvoiceTotal+extra {
		t.Fatalf("%d invoices", got)
	}
	for _, d := range base.List("Sales Invoice") {
		e := ds.Get("Sales Invoice", d.Name)
		if e == nil || e.Dec("grand_total") != d.Dec("grand_total") || e.Str("modified") != d.Str("modified") {
			t.Fatalf("seeded invoice %s changed", d.Name)
		}
	}
	for _, dt := range []string{"Payment Entry", "Purchase Invoice", "Bin", "Bank Transaction"} {
		if len(ds.List(dt)) != len(base.List(dt)) {
			t.Fatalf("%s count changed", dt)
		}
	}
	var open int
	for _, d := range ds.List("Sales Invoice") {
		if d.Str("remarks") == "Benchmark invoice" {
			open++
			if d.Int("docstatus") != 1 || d.Dec("outstanding_amount").Cents() != partyTotal(d) {
				t.Fatalf("extra invoice %s", d.Name)
			}
		}
	}
	if open != extra {
		t.Fatalf("%d benchmark invoices", open)
	}
	r := runReport(t, s, s.User("all-companies"), "Accounts Receivable", map[string]any{"company": nzCompany}, nil)
	b := runReport(t, testServer(t), s.User("all-companies"), "Accounts Receivable", map[string]any{"company": nzCompany}, nil)
	if len(r.rows) <= len(b.rows) {
		t.Fatalf("AR rows %d with extras, %d without", len(r.rows), len(b.rows))
	}
}

func TestPurchaseInvoiceStatuses(t *testing.T) {
	ds := testData(t)
	statuses := map[string]int{}
	for _, d := range ds.List("Purchase Invoice") {
		statuses[d.Str("status")]++
		if d.Int("docstatus") == 1 && d.Str("party_account_currency") != companyCurrency(ds, d.Str("company")) {
			t.Fatalf("%s party account currency %s", d.Name, d.Str("party_account_currency"))
		}
		if d.Int("is_return") == 1 && (d.Dec("grand_total") >= 0 || d.Str("return_against") == "") {
			t.Fatalf("debit note %s", d.Name)
		}
	}
	for _, st := range []string{"Draft", "Cancelled", "Paid", "Partly Paid", "Unpaid", "Overdue", "Return", "Debit Note Issued"} {
		if statuses[st] == 0 {
			t.Errorf("no %s purchase invoices: %v", st, statuses)
		}
	}
}

func TestOneCompanyUserReadsSharedMasters(t *testing.T) {
	s := testServer(t)
	nz := tokenAuth(s.User("one-company"))
	for _, path := range []string{"/api/resource/Item/HW-1001", "/api/resource/Item/RM-CU-SHEET", "/api/resource/Supplier/Nordic Solar AB"} {
		call(t, s, nz, path, nil).expectStatus(t, 200)
	}
	r := call(t, s, nz, "/api/resource/Bank Account", nil)
	if rows := r.rows(t); len(rows) != 1 {
		t.Fatalf("bank accounts for the NZ user: %v", rows)
	}
}
