package frappetest

import (
	"encoding/json"
	"strings"
	"testing"
)

const nzCompany = "Demo Holdings NZ Ltd"

func TestOneCompanyUserVisibility(t *testing.T) {
	s := testServer(t)
	nz := tokenAuth(s.User("one-company"))
	for _, dt := range []string{"Sales Invoice", "Sales Order", "Account", "Cost Center", "Warehouse", "Company"} {
		field := "company"
		if dt == "Company" {
			field = "name"
		}
		want := docNames(filterDocs(s, dt, func(d *Doc) bool { return d.Str(field) == nzCompany }))
		r := call(t, s, nz, "/api/resource/"+dt, map[string]string{"limit_page_length": "0"})
		r.expectStatus(t, 200)
		if got := names(r.rows(t)); !equalStrings(got, want) || len(want) == 0 {
			t.Errorf("%s: %d rows, want %d", dt, len(got), len(want))
		}
		// Permission-aware count honours the user permission ...
		r = call(t, s, nz, "/api/method/frappe.desk.reportview.get_count", map[string]string{"doctype": dt})
		if r.body["message"] != json.Number(itoaPad(len(want), 1)) {
			t.Errorf("%s reportview.get_count %v want %d", dt, r.body["message"], len(want))
		}
		// ... frappe.client.get_count does not (v15.55.1).
		r = call(t, s, nz, "/api/method/frappe.client.get_count", map[string]string{"doctype": dt})
		if r.body["message"] != json.Number(itoaPad(len(s.Data().List(dt)), 1)) {
			t.Errorf("%s client.get_count %v want %d", dt, r.body["message"], len(s.Data().List(dt)))
		}
	}
	// Masters without a company link are all visible.
	r := call(t, s, nz, "/api/resource/Customer", map[string]string{"limit_page_length": "0"})
	if len(r.rows(t)) != len(s.Data().List("Customer")) {
		t.Error("customers should not be filtered")
	}
	// Aggregates are filtered too.
	r = call(t, s, nz, "/api/resource/Sales Invoice", map[string]string{"fields": `["company","count(name) as n"]`, "group_by": "company"})
	if rows := r.rows(t); len(rows) != 1 || rows[0]["company"] != nzCompany {
		t.Fatalf("grouped rows leak other companies: %v", rows)
	}
	// Another company's document by name: 403 with the document body.
	other := filterDocs(s, "Sales Invoice", func(d *Doc) bool { return d.Str("company") != nzCompany })[0]
	r = call(t, s, nz, "/api/resource/Sales Invoice/"+other.Name, nil)
	r.expectStatus(t, 403)
	if !strings.Contains(r.raw, "does not have access to this document: Sales Invoice - "+other.Name) || r.body["_error_message"] != nil {
		t.Fatalf("doc denial body: %s", r.raw)
	}
	own := filterDocs(s, "Sales Invoice", func(d *Doc) bool { return d.Str("company") == nzCompany })[0]
	call(t, s, nz, "/api/resource/Sales Invoice/"+own.Name, nil).expectStatus(t, 200)
}

func TestNoAccountingUser(t *testing.T) {
	s := testServer(t)
	v := tokenAuth(s.User("no-accounting"))
	for _, dt := range []string{"Customer", "Item", "Company", "Sales Order"} {
		call(t, s, v, "/api/resource/"+dt, nil).expectStatus(t, 200)
	}
	for _, dt := range []string{"Sales Invoice", "Purchase Invoice", "Payment Entry", "GL Entry", "Account", "Bank Transaction"} {
		r := call(t, s, v, "/api/resource/"+dt, nil)
		r.expectStatus(t, 403)
		if r.body["_error_message"] != "No permission for "+dt || !strings.Contains(r.raw, "does not have doctype access via role permission for document <strong>"+dt+"</strong>") {
			t.Errorf("%s 403 body: %s", dt, r.raw)
		}
		call(t, s, v, "/api/method/frappe.desk.reportview.get_count", map[string]string{"doctype": dt}).expectStatus(t, 403)
	}
	if !strings.HasPrefix(call(t, s, v, "/api/resource/Sales Invoice", nil).raw, `{"exception":"frappe.exceptions.PermissionError","exc_type":"PermissionError","exc":`) {
		t.Fatal("sample 11 key order")
	}
	call(t, s, v, "/api/resource/Account/Debtors - DHNZ", nil).expectStatus(t, 403)
	// Field validation happens before the permission check.
	call(t, s, v, "/api/resource/Sales Invoice", map[string]string{"fields": `["foo"]`}).expectStatus(t, 417)
}

func TestServiceUserSeesAll(t *testing.T) {
	s := testServer(t)
	r := call(t, s, tokenAuth(s.User("service")), "/api/resource/Company", nil)
	if len(r.rows(t)) != 3 {
		t.Fatal("service user sees all companies")
	}
}
