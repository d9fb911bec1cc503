package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestApplyRedactsByNameAndShape(t *testing.T) {
	r := New(Rules{Add: []string{"EmployeeNotes"}, Skip: []string{"BirthDate"}})
	v := decode(t, `{
		"name": "ACC-SINV-2025-00001",
		"tax_id": "123-45-6789X",
		"customer": {"TaxRegistrationID": {"value": "GB123"}, "BirthDate": "1980-01-01"},
		"rows": [{"iban": "NZ00", "note": "4111 1111 1111 1111"}, {"ref": "078-05-1120"}],
		"employee_notes": "private",
		"empty_secret": "",
		"grand_total": 1234567890123.5,
		"paid_with": 4111111111111111
	}`)
	out, paths := applyPaths(r, v)
	m := out.(map[string]any)
	if m["tax_id"] != Placeholder || m["employee_notes"] != Placeholder {
		t.Errorf("name patterns not applied: %v", m)
	}
	cust := m["customer"].(map[string]any)
	if cust["TaxRegistrationID"] != Placeholder {
		t.Errorf("nested wrapped value not redacted: %v", cust)
	}
	if cust["BirthDate"] != "1980-01-01" {
		t.Errorf("skip list ignored: %v", cust)
	}
	rows := m["rows"].([]any)
	if rows[0].(map[string]any)["note"] != Placeholder || rows[1].(map[string]any)["ref"] != Placeholder {
		t.Errorf("value shapes not redacted: %v", rows)
	}
	if m["name"] != "ACC-SINV-2025-00001" || m["empty_secret"] != "" {
		t.Errorf("harmless values changed: %v", m)
	}
	if m["grand_total"] != 1234567890123.5 || m["paid_with"] != Placeholder {
		t.Errorf("amounts must be kept, card numbers sent as numbers redacted: %v, %v", m["grand_total"], m["paid_with"])
	}
	slices.Sort(paths)
	want := []string{"customer.TaxRegistrationID", "employee_notes", "paid_with", "rows[0].iban", "rows[0].note", "rows[1].ref", "tax_id"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths = %v, want %v", paths, want)
	}
}

func TestLooksSensitive(t *testing.T) {
	cases := map[string]bool{
		"078-05-1120":         true,
		"4111111111111111":    true,
		"4111-1111-1111-1111": true,
		"4111111111111112":    false, // fails Luhn
		"ACC-SINV-2025-00001": false,
		"2025-01-01":          false,
		"+64 21 555 0100":     false,
	}
	for in, want := range cases {
		if got := looksSensitive(in); got != want {
			t.Errorf("looksSensitive(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzApplyNeverPanicsAndRemovesSSNs(f *testing.F) {
	f.Add(`{"a":"078-05-1120","b":[1,"x",{"SSN":"1"}]}`)
	f.Add(`[]`)
	r := New(Rules{})
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		out, _ := applyPaths(r, v)
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("redacted value no longer encodes: %v", err)
		}
		var again any
		_ = json.Unmarshal(b, &again)
		if _, paths := applyPaths(r, again); len(paths) != 0 {
			t.Fatalf("second pass still found %v in %s", paths, b)
		}
	})
}

func TestExemptNamesAreExact(t *testing.T) {
	r := New(Rules{Exempt: []string{"bank_account"}})
	if r.SensitiveName("bank_account") {
		t.Error("an exempt field was redacted")
	}
	for _, name := range []string{"bank_account_no", "BankAccountNbr", "party_bank_account_iban"} {
		if !r.SensitiveName(name) {
			t.Errorf("%s escaped redaction through an exemption", name)
		}
	}
	if !r.Inspect([]byte(`{"bank_account_no":"123"}`)) || r.Inspect([]byte(`{"bank_account":"Main - ANZ"}`)) {
		t.Error("Inspect disagrees with SensitiveName on exemptions")
	}
}

// Verdicts are remembered for a bounded number of names, and a remembered
// verdict is the one the rules give.
func TestNameVerdictsAreBoundedAndRight(t *testing.T) {
	r := New(Rules{Exempt: []string{"account_name"}})
	for range 2 {
		for name, want := range map[string]bool{"tax_id": true, "TaxID": true, "account_name": false, "customer_name": false, "api_secret": true} {
			if got := r.SensitiveName(name); got != want {
				t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
			}
			if got := r.sensitiveNameBytes([]byte(name)); got != want {
				t.Errorf("sensitiveNameBytes(%q) = %v, want %v", name, got, want)
			}
		}
	}
	for i := range 2 * maxVerdicts {
		name := "field_" + strconv.Itoa(i)
		if r.SensitiveName(name) || !r.SensitiveName("password_"+strconv.Itoa(i)) {
			t.Fatalf("wrong verdict for %s", name)
		}
	}
	if n := len(r.verdicts); n > maxVerdicts {
		t.Errorf("%d verdicts remembered, more than %d", n, maxVerdicts)
	}
}

// applyPaths is Apply with the paths it reports.
func applyPaths(r *Redactor, v any) (any, []string) {
	out, red := r.Apply(v)
	return out, red.Paths
}
