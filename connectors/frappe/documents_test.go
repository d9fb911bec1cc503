package frappe

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func firstDoc(t *testing.T, doctype string, keep func(*frappetest.Doc) bool) *frappetest.Doc {
	t.Helper()
	docs := docsWhere(t, doctype, keep)
	if len(docs) == 0 {
		t.Fatalf("the seeded data has no matching %s: the test would prove nothing", doctype)
	}
	return docs[0]
}

func TestGetDocumentPagesItemRows(t *testing.T) {
	inv := firstDoc(t, "Sales Invoice", func(d *frappetest.Doc) bool {
		return len(d.Table("items")) >= 3 && d.Str("party_account_currency") != d.Str("currency")
	})
	items := inv.Table("items")
	seen := 0
	for offset := 0; ; {
		out := mustCall(t, allCompanies, "get_document", map[string]any{"doctype": "Sales Invoice", "name": inv.Name, "detail_limit": 2, "detail_offset": offset})
		doc := out["document"].(map[string]any)
		if offset == 0 {
			if got, want := rat(t, doc["grand_total"]), inv.Dec("grand_total").Rat(); !ratEq(got, want) {
				t.Fatalf("grand_total %s, want %s", got.FloatString(2), want.FloatString(2))
			}
			if doc["party_account_currency"] != inv.Str("party_account_currency") {
				t.Fatalf("party_account_currency %v", doc["party_account_currency"])
			}
			cur := out["currencies"].(map[string]any)
			if cur["outstanding_amount"] != inv.Str("party_account_currency") || cur["grand_total"] != inv.Str("currency") {
				t.Fatalf("currencies %v", cur)
			}
			if !strings.HasSuffix(out["url"].(string), "/app/sales-invoice/"+inv.Name) {
				t.Fatalf("url %v", out["url"])
			}
		}
		rows := doc["items"].([]any)
		meta := out["detail_meta"].(map[string]any)["items"].(map[string]any)
		if mustInt(t, meta["total"]) != len(items) {
			t.Fatalf("total %v, want %d", meta["total"], len(items))
		}
		for i, r := range rows {
			row := r.(map[string]any)
			want := items[offset+i]
			if row["item_code"] != want.Str("item_code") || !ratEq(rat(t, row["amount"]), want.Dec("amount").Rat()) {
				t.Fatalf("row %d = %v, want %s %s", offset+i, row, want.Str("item_code"), want.Dec("amount").String())
			}
			if _, leaked := row["parent"]; leaked {
				t.Fatalf("bookkeeping field leaked: %v", row)
			}
		}
		seen += len(rows)
		if meta["next_offset"] == nil {
			if meta["complete"] != true {
				t.Fatalf("last page not complete: %v", meta)
			}
			break
		}
		offset = mustInt(t, meta["next_offset"])
	}
	if seen != len(items) {
		t.Fatalf("saw %d item rows, want %d", seen, len(items))
	}
}

func TestGetDocumentPaymentReferencesAndBankLinks(t *testing.T) {
	t.Run("Payment Entry", func(t *testing.T) {
		pe := firstDoc(t, "Payment Entry", func(d *frappetest.Doc) bool { return len(d.Table("references")) > 0 })
		out := mustCall(t, allCompanies, "get_document", map[string]any{"doctype": "Payment Entry", "name": pe.Name})
		refs := out["document"].(map[string]any)["references"].([]any)
		if len(refs) != min(len(pe.Table("references")), defaultDetailLimit) {
			t.Fatalf("%d references, want %d", len(refs), len(pe.Table("references")))
		}
		for i, r := range refs {
			want := pe.Table("references")[i]
			row := r.(map[string]any)
			if row["reference_name"] != want.Str("reference_name") || !ratEq(rat(t, row["allocated_amount"]), want.Dec("allocated_amount").Rat()) {
				t.Fatalf("reference %d = %v", i, row)
			}
		}
		if out["currencies"].(map[string]any)["references"] == nil {
			t.Fatalf("no currency for the reference amounts: %v", out["currencies"])
		}
	})
	t.Run("Bank Transaction", func(t *testing.T) {
		bt := firstDoc(t, "Bank Transaction", func(d *frappetest.Doc) bool { return len(d.Table("payment_entries")) > 0 })
		out := mustCall(t, allCompanies, "get_document", map[string]any{"doctype": "Bank Transaction", "name": bt.Name})
		links := out["document"].(map[string]any)["payment_entries"].([]any)
		if len(links) != len(bt.Table("payment_entries")) {
			t.Fatalf("%d links, want %d", len(links), len(bt.Table("payment_entries")))
		}
		if links[0].(map[string]any)["payment_entry"] != bt.Table("payment_entries")[0].Str("payment_entry") {
			t.Fatalf("link %v", links[0])
		}
	})
}

func TestGetDocumentEmptyTableIsNotClaimedComplete(t *testing.T) {
	c := firstDoc(t, "Item", func(d *frappetest.Doc) bool { return len(d.Table("reorder_levels")) == 0 })
	out := mustCall(t, allCompanies, "get_document", map[string]any{"doctype": "Item", "name": c.Name})
	meta := out["detail_meta"].(map[string]any)["reorder_levels"].(map[string]any)
	if meta["available"] != true || meta["complete"] != false || mustInt(t, meta["total"]) != 0 {
		t.Fatalf("empty table meta %v", meta)
	}
}

func TestGetDocumentErrors(t *testing.T) {
	_, err := call(t, allCompanies, "get_document", map[string]any{"doctype": "Sales Invoice", "name": "ACC-SINV-1999-99999"})
	wantCode(t, err, toolerr.NotFound)
	other := firstDoc(t, "Sales Invoice", func(d *frappetest.Doc) bool { return d.Str("company") == otherCompany(t) })
	_, err = call(t, oneCompany, "get_document", map[string]any{"doctype": "Sales Invoice", "name": other.Name})
	wantCode(t, err, toolerr.PermissionDenied)
	_, err = call(t, noAccounting, "get_document", map[string]any{"doctype": "Sales Invoice", "name": other.Name})
	wantCode(t, err, toolerr.PermissionDenied)
	_, err = call(t, allCompanies, "get_document", map[string]any{"doctype": "User", "name": "Administrator"})
	wantCode(t, err, toolerr.InvalidArgument)
}

func TestSearchAndFetch(t *testing.T) {
	out := mustCall(t, allCompanies, "search", map[string]any{"query": "harbour freight"})
	results := out["results"].([]any)
	var ids []string
	for _, r := range results {
		res := r.(map[string]any)
		ids = append(ids, res["id"].(string))
		if !strings.Contains(res["url"].(string), "/app/") {
			t.Fatalf("url %v", res["url"])
		}
	}
	for _, want := range []string{"Customer/Harbour Freight Ltd", "Customer/Harbour Freight Inc", "Customer/Harbour Freight Logistics"} {
		if !containsString(ids, want) {
			t.Fatalf("results %v lack %s", ids, want)
		}
	}
	foundInvoice := false
	for _, id := range ids {
		if strings.HasPrefix(id, "Sales Invoice/") {
			foundInvoice = true
		}
	}
	if !foundInvoice {
		t.Fatalf("no invoice of Harbour Freight found: %v", ids)
	}

	inv := firstDoc(t, "Sales Invoice", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	out = mustCall(t, allCompanies, "search", map[string]any{"query": inv.Name})
	if first := out["results"].([]any); len(first) == 0 || first[0].(map[string]any)["id"] != "Sales Invoice/"+inv.Name {
		t.Fatalf("search by invoice number: %v", out["results"])
	}
	f := mustCall(t, allCompanies, "fetch", map[string]any{"id": "Sales Invoice/" + inv.Name})
	if f["id"] != "Sales Invoice/"+inv.Name || !strings.Contains(f["text"].(string), inv.Str("customer_name")) {
		t.Fatalf("fetch %v", f)
	}
	if !strings.Contains(f["text"].(string), "grand total: "+inv.Str("currency")+" "+roundRat(inv.Dec("grand_total").Rat(), 2)) {
		t.Fatalf("fetch text lacks the grand total with its currency:\n%s", f["text"])
	}
	md := f["metadata"].(map[string]any)
	if md["company"] != inv.Str("company") {
		t.Fatalf("metadata %v", md)
	}

	// A sales user cannot read invoices: search says so instead of
	// pretending nothing matched.
	out = mustCall(t, noAccounting, "search", map[string]any{"query": "harbour"})
	skipped := map[string]bool{}
	for _, n := range out["not_searched"].([]any) {
		skipped[n.(map[string]any)["doctype"].(string)] = true
	}
	if !skipped["Sales Invoice"] || skipped["Customer"] {
		t.Fatalf("not_searched %v", out["not_searched"])
	}
	_, err := call(t, noAccounting, "fetch", map[string]any{"id": "Sales Invoice/" + inv.Name})
	wantCode(t, err, toolerr.PermissionDenied)
	for _, id := range []string{"nonsense", "User/Administrator", "Sales Invoice/"} {
		_, err := call(t, allCompanies, "fetch", map[string]any{"id": id})
		wantCode(t, err, toolerr.InvalidArgument)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSearchIgnoresAccentsLikeTheERP(t *testing.T) {
	out := mustCall(t, allCompanies, "search", map[string]any{"query": "aroha cafe"})
	found := false
	for _, r := range out["results"].([]any) {
		if r.(map[string]any)["id"] == "Customer/Aroha Café Limited" {
			found = true
		}
	}
	if !found {
		t.Fatalf("results %v lack Aroha Café Limited", out["results"])
	}
}
