package frappetest

import (
	"slices"
	"testing"
)

// An accent-sensitive site (Frappe on PostgreSQL sends ILIKE): like still
// ignores case but no longer folds accents; "=" keeps the collation.
func TestAccentSensitiveLike(t *testing.T) {
	def := testServer(t)
	pg := newServer(t, Options{AccentSensitiveLike: true})
	filter := map[string]string{"filters": `[["customer_name","like","%aroha cafe%"]]`}
	if got := listNames(t, def, "Customer", filter); !slices.Equal(got, []string{"Aroha Café Limited"}) {
		t.Fatalf("default site: %v", got)
	}
	if got := listNames(t, pg, "Customer", filter); len(got) != 0 {
		t.Fatalf("accent-sensitive site matched across accents: %v", got)
	}
	for _, f := range []string{`[["customer_name","like","%AROHA CAFÉ%"]]`, `[["customer_name","like","%aroha caf_ l%"]]`} {
		if got := listNames(t, pg, "Customer", map[string]string{"filters": f}); !slices.Equal(got, []string{"Aroha Café Limited"}) {
			t.Fatalf("accent-sensitive site, %s: %v", f, got)
		}
	}
}

// Extra customers are the most recently modified ones and change nothing
// else.
func TestExtraCustomers(t *testing.T) {
	extra := []string{"Zürich Partners AG", "Crème Brûlée Ltd"}
	s := newServer(t, Options{ExtraCustomers: extra})
	got := listNames(t, s, "Customer", map[string]string{"order_by": "modified desc", "limit_page_length": "2"})
	if !slices.Equal(got, []string{"Crème Brûlée Ltd", "Zürich Partners AG"}) {
		t.Fatalf("newest customers: %v", got)
	}
	base := testServer(t)
	if n, m := len(s.Data().List("Customer")), len(base.Data().List("Customer")); n != m+2 {
		t.Fatalf("%d customers, want %d", n, m+2)
	}
	if n, m := len(s.Data().List("Sales Invoice")), len(base.Data().List("Sales Invoice")); n != m {
		t.Fatalf("%d invoices, want %d", n, m)
	}
}

// A DocType the site does not have answers as Frappe does for an unknown
// one, on lists, reads and counts.
func TestMissingDoctypes(t *testing.T) {
	s := newServer(t, Options{MissingDoctypes: []string{"Bank Transaction"}})
	expectError(t, admin(t, s, "/api/resource/Bank Transaction", nil), 404, "DoesNotExistError", "DocType Bank Transaction not found")
	expectError(t, admin(t, s, "/api/resource/Bank Transaction/X", nil), 404, "DoesNotExistError", "DocType Bank Transaction not found")
	expectError(t, admin(t, s, "/api/method/frappe.desk.reportview.get_count", map[string]string{"doctype": "Bank Transaction"}), 404, "DoesNotExistError", "DocType Bank Transaction not found")
	admin(t, s, "/api/resource/Customer", nil).expectStatus(t, 200)
}
