package redact

import (
	"strings"
	"testing"
)

// TestRedactText is the table of error-text rules: an ERP's message keeps
// what helps the model and loses values, SQL, tracebacks and credentials.
func TestRedactText(t *testing.T) {
	r := New(Rules{})
	cases := []struct{ in, want string }{
		{"Customer Acme: Tax ID: 12-3456789 is already used", "Customer Acme: Tax ID: [REDACTED] is already used"},
		{"Row 2: bank_ac_no = 0123456789 is invalid", "Row 2: bank_ac_no = [REDACTED] is invalid"},
		{"Employee HR-EMP-0001 has SSN 078 05 1120 on file", "Employee HR-EMP-0001 has SSN [REDACTED] on file"},
		{"duplicate value 078-05-1120", "duplicate value [REDACTED]"},
		{"Pay to DE89370400440532013000 failed", "Pay to [REDACTED] failed"},
		{"card 4111 1111 1111 1111 declined", "card [REDACTED] declined"},
		{"could not reach https://admin:hunter2@erp.example.com/api", "could not reach https://[REDACTED]@erp.example.com/api"},
		{"header Authorization: token 1a2b3c4d5e6f:9f8e7d6c5b4a rejected", "header Authorization: token [REDACTED] rejected"},
		{"Validation failed\nTraceback (most recent call last):\n  File \"apps/frappe/frappe/app.py\", line 114\nfrappe.exceptions.ValidationError: x", "Validation failed"},
		{"(1054, \"Unknown column 'x' in 'where clause'\") SELECT `name` FROM `tabCustomer` WHERE tax_id = 'GB1'", WithheldDatabaseError},
		{"Duplicate entry 'GB123' for key 'tax_id'", WithheldDatabaseError},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x rejected", "Authorization: Bearer [REDACTED] rejected"},
		// Left alone.
		{"Acumatica did not accept the service connection's token verification request", ""},
		{"Please select a company from the list", ""},
		{"Field not permitted in query: foo", ""},
		{"Operator must be one of =, !=, >, <, >=, <=, like, not like, in, not in, is, between", ""},
		{"Posting date 2026-01-31 is outside fiscal year 2025", ""},
		{"Account: 1110 - Cash - AC is frozen", ""},
		// "is" before a word that says what state the value is in: the
		// sentence is about the value, and the word is no value.
		{"API key is missing", ""},
		{"The API Secret is incorrect or expired", ""},
		{"Password is required for user admin", ""},
		{"Access token is not valid", ""},
		{"The password is too short", ""},
		// The same names before a value still lose it.
		{"password is hunter2", "password is [REDACTED]"},
		{"API key is 9f8e7d6c5b4a", "API key is [REDACTED]"},
		{"password: missing", "password: [REDACTED]"},
		// A name in quotes, as in JSON or a Python dict an ERP prints in
		// its message: what Apply would redact in a result.
		{`Could not save Employee: {"bank_ac_no": "00012345678", "tax_id": "GB123456789", "api_secret": "5f1c2e9ab", "first_name": "Ann"}`,
			`Could not save Employee: {"bank_ac_no": [REDACTED], "tax_id": [REDACTED], "api_secret": [REDACTED], "first_name": "Ann"}`},
		{`{'password': 'hunter2', 'api_secret': 'abc123'}`, `{'password': [REDACTED], 'api_secret': [REDACTED]}`},
		{`"AccountNbr"="000123456789"`, `"AccountNbr"=[REDACTED]`},
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		got, changed := r.RedactText(c.in)
		if got != want {
			t.Errorf("RedactText(%q)\n got %q\nwant %q", c.in, got, want)
		}
		if changed != (got != c.in) {
			t.Errorf("RedactText(%q) reports changed=%v", c.in, changed)
		}
	}
}

// FuzzRedactText: the text never grows a value it removed, and a second
// pass changes nothing.
func FuzzRedactText(f *testing.F) {
	for _, s := range []string{"Tax ID: 12-3456789", "https://a:b@h/", "SELECT * FROM `tabX`", "SSN 078051120", "x 4111111111111111 y"} {
		f.Add(s)
	}
	r := New(Rules{})
	f.Fuzz(func(t *testing.T, s string) {
		once, _ := r.RedactText(s)
		twice, _ := r.RedactText(once)
		if twice != once {
			t.Fatalf("RedactText is not stable on %q:\n once %q\ntwice %q", s, once, twice)
		}
		if strings.Contains(once, "hunter2") && !strings.Contains(s, "hunter2") {
			t.Fatalf("RedactText invented text")
		}
	})
}
