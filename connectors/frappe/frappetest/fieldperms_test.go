package frappetest

import (
	"encoding/json"
	"strings"
	"testing"
)

// A field above the user's permlevel is dropped from the query without an
// error: the rows lack its key and an aggregate over it lacks its alias.
func TestHighPermlevelFieldsAreDropped(t *testing.T) {
	s := testServer(t)
	clerk := tokenAuth(s.User("field-limited"))
	manager := tokenAuth(s.User("all-companies"))
	params := map[string]string{"fields": `["name","grand_total","base_grand_total"]`, "order_by": "name asc", "limit_page_length": "3"}
	for _, r := range call(t, s, clerk, "/api/resource/Sales Invoice", params).rows(t) {
		if _, ok := r["base_grand_total"]; ok {
			t.Fatalf("the clerk read a permlevel 1 field: %v", r)
		}
		if _, ok := r["grand_total"]; !ok {
			t.Fatalf("the clerk lost a permlevel 0 field: %v", r)
		}
	}
	for _, r := range call(t, s, manager, "/api/resource/Sales Invoice", params).rows(t) {
		if _, ok := r["base_grand_total"]; !ok {
			t.Fatalf("the accounts manager should read base_grand_total: %v", r)
		}
	}
	agg := map[string]string{"fields": `["count(name) as n","sum(base_net_total) as net","sum(net_total) as doc_net"]`}
	rows := call(t, s, clerk, "/api/resource/Sales Invoice", agg).rows(t)
	if len(rows) != 1 {
		t.Fatalf("aggregate rows %v", rows)
	}
	if _, ok := rows[0]["net"]; ok {
		t.Fatalf("the clerk summed a permlevel 1 field: %v", rows[0])
	}
	if rows[0]["n"] != json.Number(itoaPad(len(s.Data().List("Sales Invoice")), 1)) {
		t.Fatalf("count %v, want %d", rows[0]["n"], len(s.Data().List("Sales Invoice")))
	}
	// A document read whole loses them too.
	inv := s.Data().List("Sales Invoice")[0]
	doc := call(t, s, clerk, "/api/resource/Sales Invoice/"+inv.Name, nil)
	doc.expectStatus(t, 200)
	if data := doc.body["data"].(map[string]any); data["base_grand_total"] != nil || data["grand_total"] == nil {
		t.Fatalf("the clerk's document: base_grand_total %v, grand_total %v", data["base_grand_total"], data["grand_total"])
	}
	// The wildcard leaves them out too (get_permitted_fields).
	for _, r := range call(t, s, clerk, "/api/resource/Customer", map[string]string{"fields": `["*"]`, "limit_page_length": "2"}).rows(t) {
		if _, ok := r["default_currency"]; ok {
			t.Fatalf("wildcard gave the clerk default_currency: %v", r)
		}
	}
}

// A field the site's schema lacks is refused with Frappe's own 417 body.
func TestMissingFieldsAreRefused(t *testing.T) {
	s := newServer(t, Options{MissingFields: map[string][]string{"Customer": {"customer_type"}}})
	auth := tokenAuth(s.User("all-companies"))
	for _, params := range []map[string]string{
		{"fields": `["name","customer_type"]`},
		{"fields": `["name"]`, "filters": `[["customer_type","=","Company"]]`},
	} {
		r := call(t, s, auth, "/api/resource/Customer", params)
		r.expectStatus(t, 417)
		if r.body["exc_type"] != "DataError" || r.body["exception"] != "frappe.exceptions.DataError: Field not permitted in query: customer_type" {
			t.Fatalf("body %s", r.raw)
		}
		var msgs []string
		if err := json.Unmarshal([]byte(r.body["_server_messages"].(string)), &msgs); err != nil || len(msgs) != 1 {
			t.Fatalf("_server_messages %v: %v", r.body["_server_messages"], err)
		}
	}
	call(t, s, auth, "/api/resource/Customer", map[string]string{"fields": `["name","customer_name"]`}).expectStatus(t, 200)
	// The shared simulator still has the field.
	call(t, testServer(t), auth, "/api/resource/Customer", map[string]string{"fields": `["name","customer_type"]`}).expectStatus(t, 200)
}

// get_script runs get_report_doc's checks, as running the report does.
func TestGetScriptChecksReportAccess(t *testing.T) {
	s := testServer(t)
	params := map[string]string{"report_name": "Accounts Receivable"}
	r := call(t, s, tokenAuth(s.User("no-accounting")), "/api/method/frappe.desk.query_report.get_script", params)
	r.expectStatus(t, 403)
	if r.body["exc_type"] != "PermissionError" || !strings.Contains(r.raw, "You don't have access to Report: Accounts Receivable") {
		t.Fatalf("body %s", r.raw)
	}
	r = call(t, s, tokenAuth(s.User("all-companies")), "/api/method/frappe.desk.query_report.get_script", params)
	r.expectStatus(t, 200)
	if m, ok := r.body["message"].(map[string]any); !ok || !strings.Contains(m["script"].(string), "Accounts Receivable") {
		t.Fatalf("body %s", r.raw)
	}
	call(t, s, tokenAuth(s.User("all-companies")), "/api/method/frappe.desk.query_report.get_script", map[string]string{"report_name": "No Such Report"}).expectStatus(t, 404)
}
