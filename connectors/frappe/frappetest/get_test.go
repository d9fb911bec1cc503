package frappetest

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestGetDocumentShape(t *testing.T) {
	s := testServer(t)
	d := s.Data().Get("Sales Invoice", "ACC-SINV-2025-00003")
	r := admin(t, s, "/api/resource/Sales Invoice/ACC-SINV-2025-00003", nil)
	r.expectStatus(t, 200)
	if !strings.HasPrefix(r.raw, `{"data":{"name":"ACC-SINV-2025-00003","owner":`) ||
		!strings.Contains(r.raw, `"modified_by":"accounts@demo.example","docstatus":`+itoaPad(int(d.Int("docstatus")), 1)+`,"idx":0,"title":`) {
		t.Fatalf("standard key order: %.300s", r.raw)
	}
	doc := r.body["data"].(map[string]any)
	if _, ok := doc["amended_from"]; ok {
		t.Error("NULL field amended_from should be omitted")
	}
	if doc["doctype"] != "Sales Invoice" {
		t.Error("doctype key")
	}
	for _, tf := range []string{"items", "taxes", "payment_schedule", "sales_team", "advances", "payments", "packed_items", "pricing_rules"} {
		if _, ok := doc[tf].([]any); !ok {
			t.Errorf("table %s missing or not a list", tf)
		}
	}
	items := doc["items"].([]any)
	if len(items) != len(d.Table("items")) {
		t.Fatalf("items %d want %d", len(items), len(d.Table("items")))
	}
	first := items[0].(map[string]any)
	if first["parent"] != d.Name || first["parentfield"] != "items" || first["parenttype"] != "Sales Invoice" || first["doctype"] != "Sales Invoice Item" {
		t.Fatalf("child row: %v", first)
	}
	// doctype comes after the data fields and before the tables; parent
	// columns come last in child rows.
	if i, j := strings.Index(r.raw, `"doctype":"Sales Invoice"`), strings.Index(r.raw, `"items":[`); i < 0 || j < i {
		t.Fatal("doctype must precede table fields")
	}
	if !strings.Contains(r.raw, `"parent":"ACC-SINV-2025-00003","parentfield":"items","parenttype":"Sales Invoice","doctype":"Sales Invoice Item"}`) {
		t.Fatal("child row key order")
	}
	gt := d.Dec("grand_total").Float64()
	if got, _ := doc["grand_total"].(json.Number).Float64(); got != gt {
		t.Fatalf("grand_total %v want %v", got, gt)
	}
	// Empty tables are [] (Customer has several).
	r = admin(t, s, "/api/resource/Customer/"+url.PathEscape("Smith/Jones Partners LLC"), nil)
	r.expectStatus(t, 200)
	if !strings.Contains(r.raw, `"sales_team":[]`) {
		t.Fatalf("empty table: %s", r.raw)
	}
	// /api/v1 and a trailing slash work too; names are case-insensitive.
	admin(t, s, "/api/v1/resource/Customer/acme widgets inc/", nil).expectStatus(t, 200)
	// "+" is not a space.
	r = admin(t, s, "/api/resource/Sales+Invoice/ACC-SINV-2025-00003", nil)
	if r.status != 404 || !strings.Contains(r.raw, "DocType Sales+Invoice not found") {
		t.Fatalf("plus: %d %s", r.status, r.raw)
	}
}

func TestGetNotFoundBeforeForbidden(t *testing.T) {
	s := testServer(t)
	viewer := tokenAuth(s.User("no-accounting"))
	r := call(t, s, viewer, "/api/resource/Sales Invoice/ACC-SINV-XXXX", nil)
	r.expectStatus(t, 404)
	if !strings.HasPrefix(r.raw, `{"exc_type":"DoesNotExistError","_server_messages":"[`) || !strings.Contains(r.raw, `Sales Invoice ACC-SINV-XXXX not found`) {
		t.Fatalf("404 body: %s", r.raw)
	}
	call(t, s, viewer, "/api/resource/Sales Invoice/ACC-SINV-2025-00001", nil).expectStatus(t, 403)
	r = call(t, s, viewer, "/api/resource/Nope/x", nil)
	if r.status != 404 || !strings.Contains(r.raw, "DocType Nope not found") {
		t.Fatalf("unknown doctype: %s", r.raw)
	}
	r = admin(t, s, "/api/unknown/route", nil)
	if r.status != 404 || r.raw != `{"exc_type":"DoesNotExistError"}` {
		t.Fatalf("unknown route: %s", r.raw)
	}
}

func TestFrappeClientGetIncludesNulls(t *testing.T) {
	s := testServer(t)
	r := admin(t, s, "/api/method/frappe.client.get", map[string]string{"doctype": "Sales Invoice", "name": "ACC-SINV-2025-00003"})
	r.expectStatus(t, 200)
	doc := r.body["message"].(map[string]any)
	if v, ok := doc["amended_from"]; !ok || v != nil {
		t.Fatalf("frappe.client.get keeps nulls: %v", v)
	}
}

func TestMethods(t *testing.T) {
	s := testServer(t)
	r := admin(t, s, "/api/method/frappe.auth.get_logged_user", nil)
	if r.raw != `{"message":"accounts@demo.example"}` {
		t.Fatalf("logged user: %s", r.raw)
	}
	r = admin(t, s, "/api/method/frappe.client.get_list", map[string]string{"doctype": "Customer", "fields": `["name","customer_name"]`, "limit_page_length": "1"})
	r.expectStatus(t, 200)
	if !strings.HasPrefix(r.raw, `{"message":[{"name":`) {
		t.Fatalf("get_list: %s", r.raw)
	}
	for method, msg := range map[string]string{
		"x":                     "Failed to get method for command x with Empty module name",
		"frappe.client.nope":    "Failed to get method for command frappe.client.nope with module 'frappe.client' has no attribute 'nope'",
		"mymodule.api.do_thing": "Failed to get method for command mymodule.api.do_thing with No module named 'mymodule'",
	} {
		r := admin(t, s, "/api/method/"+method, nil)
		if r.status != 417 || !strings.Contains(r.raw, msg) {
			t.Errorf("%s: %d %s", method, r.status, r.raw)
		}
	}
}
