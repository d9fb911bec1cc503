package acumatica

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/redact"
)

// The record samples in testdata/samples are Acumatica's own responses
// (see each .meta.json): real Customer, SalesOrder and StockItem answers,
// the 422 Bill with field errors, and the documented synthetic Invoice.
var recordSamples = []string{
	"customer-put-200.json", "customer-list-top1-200.json",
	"salesorder-put-200.json", "salesorder-list-top1-200.json",
	"stockitem-put-200.json", "stockitem-list-top1-200.json",
	"SYNTHETIC-invoice-get-expand-details-v24.200.001.json", "bill-put-422-detail-error.json",
}

// loadSample decodes a sample as Acumatica's client would: numbers kept
// as written.
func loadSample(t *testing.T, name string) any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func sampleRecords(t *testing.T, name string) []map[string]any {
	switch v := loadSample(t, name).(type) {
	case map[string]any:
		return []map[string]any{v}
	case []any:
		var out []map[string]any
		for _, r := range v {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	t.Fatalf("%s is neither a record nor a list", name)
	return nil
}

// wrappersLeft finds {"value": …} wrappers left after unwrapping (those
// carrying a field error are kept on purpose).
func wrappersLeft(v any, path string, found *[]string) {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t["value"]; ok {
			if _, hasErr := t["error"]; !hasErr {
				*found = append(*found, path)
			}
		}
		for k, c := range t {
			wrappersLeft(c, path+"."+k, found)
		}
	case []any:
		for _, c := range t {
			wrappersLeft(c, path+"[]", found)
		}
	}
}

func TestUnwrapRealSamples(t *testing.T) {
	for _, name := range recordSamples {
		for _, rec := range sampleRecords(t, name) {
			raw, _ := json.Marshal(rec)
			out := unwrapRecord(rec)
			var left []string
			wrappersLeft(out, "", &left)
			if len(left) > 0 {
				t.Errorf("%s: wrappers left at %v", name, left)
			}
			if _, ok := out["_links"]; ok {
				t.Errorf("%s: _links kept", name)
			}
			if _, ok := out["rowNumber"]; ok {
				t.Errorf("%s: rowNumber kept", name)
			}
			// Every field of the sample survives, by name.
			for k := range rec {
				if _, ok := out[k]; !ok && !systemKeys[k] && k != "custom" {
					t.Errorf("%s: field %s lost", name, k)
				}
			}
			// The input is untouched.
			again, _ := json.Marshal(rec)
			if !bytes.Equal(raw, again) {
				t.Errorf("%s: unwrapping modified its input", name)
			}
		}
	}
}

func TestUnwrapKeepsExactValues(t *testing.T) {
	cust := unwrapRecord(sampleRecords(t, "customer-put-200.json")[0])
	checks := []struct {
		got  any
		want any
	}{
		{cust["WriteOffLimit"], json.Number("30.0000")},
		{cust["AccountRef"], nil},
		{cust["CustomerName"], "ACME"},
		{cust["CreatedDateTime"], "2023-12-14T17:20:45.16+00:00"},
		{cust["OrderPriority"], json.Number("0")},
		{cust["EnableWriteOffs"], true},
		{cust["note"], ""},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("customer check %d: got %#v, want %#v", i, c.got, c.want)
		}
	}
	so := unwrapRecord(sampleRecords(t, "salesorder-list-top1-200.json")[0])
	if so["CurrencyRate"] != json.Number("1.00000000") || so["ControlTotal"] != json.Number("7000.0000") {
		t.Errorf("sales order decimals = %v %v", so["CurrencyRate"], so["ControlTotal"])
	}
	item := unwrapRecord(sampleRecords(t, "stockitem-list-top1-200.json")[0])
	if item["AverageCost"] != json.Number("0.0") || item["DefaultPrice"] != json.Number("0.000000") {
		t.Errorf("stock item decimals = %v %v", item["AverageCost"], item["DefaultPrice"])
	}
	inv := unwrapRecord(sampleRecords(t, "SYNTHETIC-invoice-get-expand-details-v24.200.001.json")[0])
	line := inv["Details"].([]any)[0].(map[string]any)
	if line["Qty"] != json.Number("2.000000") || line["UnitPrice"] != json.Number("150.000000") || line["CostCode"] != nil {
		t.Errorf("invoice line = %v", line)
	}
	if _, ok := line["_links"]; ok {
		t.Error("a detail line kept _links")
	}
	// A record with validation errors keeps them where they were.
	bill := unwrapRecord(sampleRecords(t, "bill-put-422-detail-error.json")[0])
	if !strings.HasPrefix(bill["error"].(string), "Inserting") || bill["ReferenceNbr"] != "<NEW>" || bill["Amount"] != json.Number("201.73") {
		t.Errorf("bill = %v", bill)
	}
	project := bill["Details"].([]any)[0].(map[string]any)["Project"].(map[string]any)
	if project["value"] != "TES2323T" || !strings.Contains(project["error"].(string), "cannot be found") {
		t.Errorf("field error = %v", project)
	}
}

func TestUnwrapCustomFields(t *testing.T) {
	rec := map[string]any{"id": "x", "custom": map[string]any{"Document": map[string]any{
		"AttributePRODUCT": map[string]any{"type": "CustomStringField", "value": "Apple jam 8 oz."}}}}
	out := unwrapRecord(rec)
	if out["custom"].(map[string]any)["Document"].(map[string]any)["AttributePRODUCT"] != "Apple jam 8 oz." {
		t.Errorf("custom = %v", out["custom"])
	}
	if _, ok := unwrapRecord(map[string]any{"custom": map[string]any{}})["custom"]; ok {
		t.Error("an empty custom was kept")
	}
}

// Redaction runs on the unwrapped record, so field names match the
// built-in patterns of platform/infra/redact directly: a tax id or bank account in a real sample's
// shape is redacted, empty ones stay null and are not reported.
func TestRedactionOnUnwrappedSamples(t *testing.T) {
	r := redact.New(redact.Rules{})
	empty := unwrapRecord(sampleRecords(t, "customer-put-200.json")[0])
	if _, paths := redactPaths(r, empty); len(paths) != 0 {
		t.Errorf("empty sensitive fields were reported: %v", paths)
	}

	rec := sampleRecords(t, "customer-put-200.json")[0]
	rec["TaxRegistrationID"] = map[string]any{"value": "12-3456789"}
	rec["MainContact"] = map[string]any{"id": "c1", "Email": map[string]any{"value": "ap@acme.example"},
		"BankAccountNbr": map[string]any{"value": "000123456789"}}
	out, paths := redactPaths(r, unwrapRecord(rec))
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"MainContact.BankAccountNbr", "TaxRegistrationID"}) {
		t.Errorf("redacted paths = %v", paths)
	}
	m := out.(map[string]any)
	if m["TaxRegistrationID"] != redact.Placeholder || m["CustomerName"] != "ACME" || m["WriteOffLimit"] != json.Number("30.0000") {
		t.Errorf("after redaction = %v", m)
	}
}

// redactPaths is Apply with the paths it reports.
func redactPaths(r *redact.Redactor, v any) (any, []string) {
	out, red := r.Apply(v)
	return out, red.Paths
}
