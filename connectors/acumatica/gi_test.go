package acumatica

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// inquiryDenied reports whether the simulator denies kind an inquiry's
// data: the no-AR role lacks inquiries over AR forms, the no-canary role
// the canary, and everyone but the administrator the administrators'
// inquiry.
func inquiryDenied(kind userKind, q *acumaticatest.Inquiry) bool {
	switch q.Name {
	case acumaticatest.CanaryInquiry:
		return kind == kindNoCanary
	case acumaticatest.AdminInquiry:
		// Acumatica lets only kindFull read it; erpgate never does.
		return true
	}
	if kind != kindNoAR {
		return false
	}
	for _, s := range q.Requires {
		if strings.HasPrefix(s, "AR") {
			return true
		}
	}
	return false
}

func TestInquiryToolsForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	inquiries := h.sim.Data().Inquiries()
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			list := h.mustRun(kind, "acumatica_list_generic_inquiries", nil)
			if got := len(list["results"].([]any)); got != len(inquiries) {
				t.Fatalf("listed %d inquiries, want %d (the metadata lists every exposed one)", got, len(inquiries))
			}
			for _, q := range inquiries {
				d := h.mustRun(kind, "acumatica_describe_inquiry", map[string]any{"name": q.Name})
				if got := len(d["columns"].([]any)); got != len(q.Columns) {
					t.Errorf("%s: %d columns, want %d", q.Name, got, len(q.Columns))
				}
				args := map[string]any{"name": q.Name, "top": 3}
				out, err := h.run(kind, "acumatica_run_inquiry", args)
				if inquiryDenied(kind, q) {
					te := wantCode(t, err, toolerr.PermissionDenied, q.Name)
					if !strings.Contains(te.Message, q.Name) {
						t.Errorf("%s: message = %s", q.Name, te.Message)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", q.Name, err)
				}
				want := min(3, len(q.Rows))
				if got := len(out["results"].([]any)); got != want {
					t.Errorf("%s: %d rows, want %d", q.Name, got, want)
				}
				if out["truncated"] != (len(q.Rows) > 3) {
					t.Errorf("%s: truncated = %v with %d rows", q.Name, out["truncated"], len(q.Rows))
				}
			}
		})
	}
}

func TestRunInquiryFilterAndExactDecimals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	q := h.sim.Data().Inquiry("AR-OpenInvoices")
	want := 0
	for _, r := range q.Rows {
		if r["Status"] == "Open" && r["Currency"] == "USD" {
			want++
		}
	}
	out := h.mustRun(kindFull, "acumatica_run_inquiry", map[string]any{
		"name": "AR-OpenInvoices", "filterExpression": "Status eq 'Open' and Currency eq 'USD'", "top": 1000,
		"select": []string{"ReferenceNbr", "Status", "Balance"}, "orderBy": "ReferenceNbr desc"})
	rows := out["results"].([]any)
	if len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	first := rows[0].(map[string]any)
	bal, ok := first["Balance"].(json.Number)
	if !ok || !strings.Contains(bal.String(), ".") {
		t.Errorf("Balance = %#v, want an exact decimal", first["Balance"])
	}
	if _, ok := first["Customer"]; ok {
		t.Error("select did not limit the columns")
	}
}

func TestRunInquiryWithParametersTrimsPaddingAndKeepsDecimals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	item := h.sim.Data().Records("StockItem")[0].String("InventoryID")
	out := h.mustRun(kindFull, "acumatica_run_inquiry", map[string]any{"name": "Item Availability Data", "parameters": map[string]string{"InventoryID": item}})
	rows := out["results"].([]any)
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		row := r.(map[string]any)
		if row["InventoryID"] != item {
			t.Errorf("InventoryID = %q, want %q without CHAR padding", row["InventoryID"], item)
		}
		if n, ok := row["QtyOnHand"].(json.Number); !ok || !strings.HasSuffix(n.String(), "000") {
			t.Errorf("QtyOnHand = %#v, want the exact decimal", row["QtyOnHand"])
		}
	}
	_, err := h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoices", "parameters": map[string]string{"X": "1"}})
	wantCode(t, err, toolerr.InvalidArgument, "parameter on an inquiry without parameters")
}

func TestRunInquiryErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	_, err := h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoices", "filterExpression": "substringof('Foods', CustomerName)"})
	te := wantCode(t, err, toolerr.InvalidArgument, "v3 function on GI")
	for _, want := range []string{"never ran", "contains(Field, 'text')", "OData v4", "CustomerName"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
	_, err = h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoices", "filterExpression": "DueDate lt datetimeoffset'2026-01-01T00:00:00+00:00'"})
	te = wantCode(t, err, toolerr.InvalidArgument, "v3 date on GI")
	if !strings.Contains(te.Message, "dates bare") {
		t.Errorf("message = %s", te.Message)
	}
	_, err = h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoice"})
	te = wantCode(t, err, toolerr.NotFound, "unknown inquiry")
	if !strings.Contains(te.Message, "did you mean AR-OpenInvoices") {
		t.Errorf("message = %s", te.Message)
	}
	before := h.sim.RequestCount("/t/Demo/api/odata/gi/AR-OpenInvoices")
	_, err = h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoices", "select": []string{"Ballance"}})
	te = wantCode(t, err, toolerr.InvalidArgument, "unknown column")
	if !strings.Contains(te.Message, "did you mean Balance") || h.sim.RequestCount("/t/Demo/api/odata/gi/AR-OpenInvoices") != before {
		t.Errorf("message = %s (or the request reached Acumatica)", te.Message)
	}

	noTenant := newHarness(t, harnessOptions{settings: `{}`})
	_, err = noTenant.run(kindFull, "acumatica_list_generic_inquiries", nil)
	te = wantCode(t, err, toolerr.InvalidArgument, "no tenant")
	if !strings.Contains(te.Message, "tenant") {
		t.Errorf("message = %s", te.Message)
	}
}

// The administrators' inquiry (UsersInRoles: every user's roles) exists
// for erpgate's administrator proof, and is published for administrators:
// run_inquiry never reads it, as acumatica_list_entities never lists role
// data, whatever the user's rights. Nothing is sent.
func TestRunInquiryNeverReadsTheAdministratorsInquiry(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	path := "/t/Demo/api/odata/gi/" + acumaticatest.AdminInquiry
	for _, name := range []string{acumaticatest.AdminInquiry, strings.ToLower(acumaticatest.AdminInquiry)} {
		out, err := h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": name})
		if err == nil {
			t.Fatalf("%s was read: %v", name, out["results"])
		}
		te := wantCode(t, err, toolerr.PermissionDenied, name)
		if !strings.Contains(te.Message, "role") {
			t.Errorf("message = %s", te.Message)
		}
	}
	if n := h.sim.RequestCount(path); n != 0 {
		t.Errorf("%d requests for the administrators' inquiry", n)
	}
}

// An empty 200 from the GI endpoint (what Acumatica sends when a filter
// or sort uses a calculated column, as the simulator's LineCount is) is
// never an empty result.
func TestRunInquiryEmptyBodyIsNotNoRecords(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, args := range []map[string]any{
		{"name": "SO-SalesOrders", "filterExpression": "LineCount gt 2"},
		{"name": "SO-SalesOrders", "orderBy": "LineCount desc"},
	} {
		_, err := h.run(kindFull, "acumatica_run_inquiry", args)
		te := wantCode(t, err, toolerr.UpstreamInvalidResponse, "empty GI body")
		if !strings.Contains(te.Message, "does not mean there are no records") || !strings.Contains(te.Message, "calculated") {
			t.Errorf("%v: message = %s", args, te.Message)
		}
	}
}

// The documented metadata fragment (with elided parts) parses: entity
// sets, keys and function imports with their parameters.
func TestParseGIMetadataSample(t *testing.T) {
	raw, err := os.ReadFile("testdata/samples/odata-gi-metadata-fragment-200.xml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseGIMetadata("MyStore", raw)
	if err != nil {
		t.Fatal(err)
	}
	lead := m.inquiry("BI-LeadConversion")
	if lead == nil || lead.Type != "BILeadConversion" || len(lead.Keys) != 7 || lead.Keys[6] != "LeadID_2" {
		t.Fatalf("BI-LeadConversion = %+v", lead)
	}
	storage := m.inquiry("DB-StorageDetails")
	if storage == nil || storage.Function != "DBStorageDetails_WithParameters" || len(storage.Parameters) != 1 || storage.Parameters[0].Name != "Warehouse" {
		t.Fatalf("DB-StorageDetails = %+v", storage)
	}
	if len(m.Inquiries) != 5 {
		t.Errorf("%d inquiries, want the 5 entity sets", len(m.Inquiries))
	}
}
