package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// Issue 14, item 3: redaction cannot be bypassed through filters,
// name/value rows, missing rules or error text. Each test drives a whole
// gateway with the official MCP client against a simulator; the values it
// looks for come from the simulator's seeded data.

// findMember returns the values of every member called name in v.
func findMember(v any, name string) []any {
	var out []any
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if k == name {
				out = append(out, child)
			}
			out = append(out, findMember(child, name)...)
		}
	case []any:
		for _, child := range t {
			out = append(out, findMember(child, name)...)
		}
	}
	return out
}

func errorMessage(r toolResult) string {
	e, _ := r.Structured["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func TestRedactionFrappeEndToEnd(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	// customer_name is redacted by this deployment's own pattern.
	gw := startGateway(t, "", map[string]string{"ERPGATE_REDACT_PATTERNS": "CustomerName"})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	data := sim.Data()

	t.Run("a bank transaction's party account number is redacted", func(t *testing.T) {
		var doc *frappetest.Doc
		for _, d := range data.List("Bank Transaction") {
			if d.Str("bank_party_account_number") != "" {
				doc = d
				break
			}
		}
		if doc == nil {
			t.Fatal("the simulator has no bank transaction with a party account number")
		}
		r := callTool(t, cs, "get_document", map[string]any{"doctype": "Bank Transaction", "name": doc.Name})
		out := mustSucceed(t, r, "get_document")
		if strings.Contains(r.Text, doc.Str("bank_party_account_number")) {
			t.Errorf("the account number %s reached the client: %s", doc.Str("bank_party_account_number"), r.Text)
		}
		got := findMember(out, "bank_party_account_number")
		if len(got) != 1 || got[0] != redact.Placeholder {
			t.Errorf("bank_party_account_number = %v, want %q", got, redact.Placeholder)
		}
	})

	t.Run("sorting or searching on a redacted field is refused", func(t *testing.T) {
		for _, args := range []map[string]any{{"order_by": "customer_name"}, {"search": "Ltd"}} {
			r := callTool(t, cs, "list_customers", args)
			if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(errorMessage(r), "customer_name") {
				t.Errorf("list_customers %v: got isError=%v %s", args, r.IsError, r.Text)
			}
		}
		// Sorting on a field that is not redacted still works.
		mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"order_by": "creation", "limit": 2}), "list_customers by creation")
	})

	t.Run("an ERP error message is redacted and loses SQL and tracebacks", func(t *testing.T) {
		var other *frappetest.Doc
		for _, d := range data.List("Customer") {
			if d.Str("tax_id") != "" {
				other = d
				break
			}
		}
		if other == nil {
			t.Fatal("the simulator has no customer with a tax id")
		}
		taxID := other.Str("tax_id")
		serverMessages := func(msg string) []byte {
			inner, _ := json.Marshal(map[string]any{"message": msg, "indicator": "red", "raise_exception": 1})
			outer, _ := json.Marshal([]string{string(inner)})
			body, _ := json.Marshal(map[string]any{
				"exc_type":         "ValidationError",
				"exception":        "frappe.exceptions.ValidationError: " + msg,
				"exc":              `["Traceback (most recent call last):\n  File \"apps/frappe/frappe/app.py\", line 114, in application\nfrappe.exceptions.ValidationError"]`,
				"_server_messages": string(outer),
			})
			return body
		}
		cases := []struct {
			name, message string
			leaks         []string
		}{
			{"another record's tax id", "Tax ID: " + taxID + " is already used by " + other.Name, []string{taxID}},
			{"SQL", "(1054, \"Unknown column\") SELECT `name` FROM `tabCustomer` WHERE `tax_id` = '" + taxID + "'", []string{taxID, "tabCustomer", "SELECT"}},
			{"a URL with credentials", "could not fetch https://sync:hunter2-secret@bank.example/feed", []string{"hunter2-secret"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				sim.SetFault(frappetest.Fault{PathPrefix: "/api/resource/Customer", Status: 417, Body: serverMessages(c.message), Times: 1})
				defer sim.ClearFaults()
				r := callTool(t, cs, "list_customers", map[string]any{"limit": 1})
				if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" {
					t.Fatalf("got isError=%v %s", r.IsError, r.Text)
				}
				for _, leak := range append(c.leaks, "Traceback") {
					if strings.Contains(r.Text, leak) {
						t.Errorf("%q reached the client: %s", leak, r.Text)
					}
				}
			})
		}
	})
}

func TestRedactionAcumaticaEndToEnd(t *testing.T) {
	gw := startGateway(t, "", nil)
	acu := acumaticatest.NewServer(acumaticatest.Options{})
	defer acu.Close()
	site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, acumaticaService(acu.ServiceLogin()), "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	data := acu.Data()

	var taxed *acumaticatest.Record
	for _, v := range data.Records("Vendor") {
		if v.String("TaxRegistrationID") != "" {
			taxed = v
			break
		}
	}
	if taxed == nil {
		t.Fatal("the simulator has no vendor with a tax registration id")
	}

	t.Run("a tax code is not a person's tax id", func(t *testing.T) {
		// The Tax entity's key TaxID names a tax (NYSTATE, EUVAT): a code
		// the model needs to say which tax it read, not a registration
		// number to hide.
		tax := data.Records("Tax")[0]
		r := callTool(t, cs, "acumatica_get_tax", map[string]any{"TaxID": tax.String("TaxID")})
		out := mustSucceed(t, r, "acumatica_get_tax")
		got := findMember(out, "TaxID")
		if len(got) == 0 || got[0] != tax.String("TaxID") {
			t.Errorf("acumatica_get_tax's TaxID = %v, want %q: %s", got, tax.String("TaxID"), r.Text)
		}
	})

	t.Run("a filter, order or select on a redacted field is refused", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			// The binary search of the attack: each answer says whether
			// the hidden value sorts above the guess.
			{"acumatica_list_entities", map[string]any{"entity": "Vendor", "filterExpression": "VendorID eq '" + taxed.String("VendorID") + "' and TaxRegistrationID gt '2'"}},
			{"acumatica_list_entities", map[string]any{"entity": "Vendor", "filterExpression": "startswith(TaxRegistrationID,'1')"}},
			{"acumatica_list_entities", map[string]any{"entity": "Vendor", "select": []string{"VendorID", "TaxRegistrationID"}}},
			{"acumatica_get_vendor", map[string]any{"VendorID": taxed.String("VendorID"), "select": []string{"TaxRegistrationID"}}},
		} {
			r := callTool(t, cs, c.tool, c.args)
			if !r.IsError || r.errorCode() != "INVALID_ARGUMENT" || !strings.Contains(errorMessage(r), "TaxRegistrationID") {
				t.Errorf("%s %v: got isError=%v %s", c.tool, c.args, r.IsError, r.Text)
			}
		}
	})

	t.Run("a filter on other fields works and the result is redacted", func(t *testing.T) {
		r := callTool(t, cs, "acumatica_list_entities", map[string]any{"entity": "Vendor", "filterExpression": "VendorID eq '" + taxed.String("VendorID") + "'"})
		out := mustSucceed(t, r, "acumatica_list_entities")
		if got := findMember(out, "TaxRegistrationID"); len(got) != 1 || got[0] != redact.Placeholder {
			t.Errorf("TaxRegistrationID = %v, want %q", got, redact.Placeholder)
		}
		if strings.Contains(r.Text, taxed.String("TaxRegistrationID")) {
			t.Errorf("the tax registration id reached the client: %s", r.Text)
		}
	})

	t.Run("payment instructions keep their names and lose their account numbers", func(t *testing.T) {
		var ach *acumaticatest.Record
		for _, v := range data.Records("Vendor") {
			if len(v.Detail("PaymentInstructions")) > 0 {
				ach = v
				break
			}
		}
		if ach == nil {
			t.Fatal("the simulator has no vendor with payment instructions")
		}
		r := callTool(t, cs, "acumatica_get_vendor", map[string]any{"VendorID": ach.String("VendorID"), "expand": []string{"PaymentInstructions"}})
		out := mustSucceed(t, r, "acumatica_get_vendor")
		rows := findMember(out, "PaymentInstructions")
		if len(rows) != 1 {
			t.Fatalf("PaymentInstructions = %v", rows)
		}
		got := map[string]any{}
		for _, row := range rows[0].([]any) {
			m := row.(map[string]any)
			got[m["PaymentInstructionsID"].(string)] = m["Value"]
		}
		for _, line := range ach.Detail("PaymentInstructions") {
			id, value := line.String("PaymentInstructionsID"), line.String("Value")
			want := any(redact.Placeholder)
			if id == "BENEFNAME" {
				want = value
			} else if strings.Contains(r.Text, value) {
				t.Errorf("%s's value %s reached the client", id, value)
			}
			if got[id] != want {
				t.Errorf("%s: Value = %v, want %v", id, got[id], want)
			}
		}
	})
}
