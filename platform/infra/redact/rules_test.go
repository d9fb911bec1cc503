package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNameRules is the table of field-name rules (issue 14, item 3): the
// built-in rules caught by word parts in every case style, and names that
// merely contain a rule's letters left alone.
func TestNameRules(t *testing.T) {
	r := New(Rules{Exempt: []string{"bank_account"}})
	positive := []string{
		// Kept from before.
		"tax_id", "TaxID", "Tax Id", "taxid", "TaxRegistrationID", "iban", "party_bank_account_iban",
		"bank_account_no", "BankAccountNbr", "Password Hash", "api_secret", "date_of_birth", "BirthDate",
		"birthdate", "DOB", "EmployeeDOB", "SSN", "SSNLast4", "social_security_number", "CreditCardNumber",
		"card_number", "routing_number", "SWIFT", "salary", "BaseSalary", "PayRate", "HourlyRate",
		// Names not caught before.
		"bank_party_account_number", "bank_ac_no", "ctc",
		// Tax numbers.
		"tax_no", "TaxNumber", "vat_id", "VATNumber", "EIN", "employer_ein", "TIN", "GSTIN", "gstin",
		"ABN", "ird_number", "IRDNumber", "national_id", "NationalID", "TaxExemptionNbr",
		// Account numbers.
		"AccountNumber", "account_no", "acct_no", "BankAcctNbr", "CardAccountNbr", "sort_code", "SortCode",
		"BSB", "bsb_number", "branch_code",
		// Pay.
		"wage", "hourly_wages", "gross_pay", "base_net_pay", "NetPay", "compensation",
		// Identity.
		"passport_number", "PassportNo", "Birthday", "date_of_birthday",
	}
	negative := []string{
		"adobe_id", "DOBSON_NOTES", "dobson", "customer_name", "bank_account", "account_name", "AccountID",
		"account_type", "CashAccount", "tax_category", "TaxZone", "TaxTotal", "tax_amount", "secretary",
		"syntax_identifier", "einstein", "cabinet", "abnormal", "wagon", "net_payable", "gross_profit",
		"sort_order", "BranchID", "Branch", "tinted_glass", "passwordless_hint_text_length",
		// Redacted before because "ssn" is in their letters.
		"BusinessName", "shipping_address_name",
	}
	for _, name := range positive {
		if !r.SensitiveName(name) {
			t.Errorf("%s is not redacted", name)
		}
		if doc := `{"` + name + `":"x"}`; !r.Inspect([]byte(doc)) {
			t.Errorf("Inspect misses %s", doc)
		}
	}
	for _, name := range negative {
		if r.SensitiveName(name) {
			t.Errorf("%s is redacted", name)
		}
		if doc := `{"` + name + `":"x"}`; r.Inspect([]byte(doc)) {
			t.Errorf("Inspect wants to redact %s", doc)
		}
	}
}

// TestAddedAndSkippedRulesMatchByWords: a deployment's patterns follow
// the same word matching as the built-in ones.
func TestAddedAndSkippedRulesMatchByWords(t *testing.T) {
	r := New(Rules{Add: []string{"EmployeeNotes", "pin"}, Skip: []string{"BirthDate"}})
	for name, want := range map[string]bool{
		"employee_notes": true, "EmployeeNotes": true, "employeenotes": true, "notes": false,
		"PIN": true, "door_pin": true, "pinned": false, "spinner": false,
		"BirthDate": false, "birth_date": false, "date_of_birth": true,
	} {
		if got := r.SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestValueShapes is the table of value rules: whole values, IBANs and
// card numbers anywhere in text, card numbers sent as JSON numbers, and
// SSNs without dashes only under a name that suggests one.
func TestValueShapes(t *testing.T) {
	r := New(Rules{})
	cases := []struct {
		doc  string
		want string // the redacted document; "" when nothing changes
	}{
		{`{"note":"078-05-1120"}`, `{"note":"[REDACTED]"}`},
		{`{"note":"4111 1111 1111 1111"}`, `{"note":"[REDACTED]"}`},
		{`{"payee":"GB82WEST12345698765432"}`, `{"payee":"[REDACTED]"}`},
		{`{"remarks":"Pay DE89 3704 0044 0532 0130 00 by Friday"}`, `{"remarks":"Pay [REDACTED] by Friday"}`},
		{`{"remarks":"Paid with card 4111 1111 1111 1111 (Visa), ref 5500-0000-0000-0004."}`, `{"remarks":"Paid with card [REDACTED] (Visa), ref [REDACTED]."}`},
		{`{"remarks":"card:4111111111111111"}`, `{"remarks":"card:[REDACTED]"}`},
		{`{"paid_with":4111111111111111}`, `{"paid_with":"[REDACTED]"}`},
		{`{"rows":[5500000000000004]}`, `{"rows":["[REDACTED]"]}`},
		{`{"ss_no":"078051120"}`, `{"ss_no":"[REDACTED]"}`},
		{`{"SocialSecNbr":"078 05 1120"}`, `{"SocialSecNbr":"[REDACTED]"}`},
		{`{"employee_sin":"078-051-120"}`, ``}, // not 3-2-4
		// Left alone.
		{`{"payee":"GB82WEST12345698765431"}`, ``}, // fails mod-97
		{`{"remarks":"XGB82WEST12345698765432"}`, ``},
		{`{"remarks":"ref 4111111111111112 failed"}`, ``}, // fails Luhn
		{`{"remarks":"order SO-4111111111111111X"}`, ``},
		{`{"created_ms":1700000000000}`, ``},              // a timestamp, not a card
		{`{"grand_total":4111111111111111.5}`, ``},        // a decimal
		{`{"phone":"078051120"}`, ``},                     // no SSN hint in the name
		{`{"reference":"078 05 1120"}`, ``},               // no SSN hint in the name
		{`{"modified":"2025-01-01 10:00:00.123456"}`, ``}, // a timestamp
		{`{"name":"ACC-SINV-2025-00001","phone":"+64 21 555 0100"}`, ``},
		{`{"iban_note":"see file"}`, `{"iban_note":"[REDACTED]"}`}, // by name
	}
	for _, c := range cases {
		checkRedaction(t, r, c.doc, c.want)
	}
}

// TestNameValueRows: rows that keep their data as a name and a value have
// the value redacted when the name is sensitive.
func TestNameValueRows(t *testing.T) {
	r := New(Rules{})
	cases := []struct{ doc, want string }{
		// Acumatica vendor payment instructions, attributes and
		// payment-method details, unwrapped and wrapped.
		{`{"PaymentInstructions":[{"Description":"Bank Account","PaymentInstructionsID":"ACCOUNT","PaymentMethod":"ACH","Value":"000123456789"},{"Description":"Beneficiary Name","PaymentInstructionsID":"NAME","PaymentMethod":"ACH","Value":"Acme Ltd"}]}`,
			`{"PaymentInstructions":[{"Description":"Bank Account","PaymentInstructionsID":"ACCOUNT","PaymentMethod":"ACH","Value":"[REDACTED]"},{"Description":"Beneficiary Name","PaymentInstructionsID":"NAME","PaymentMethod":"ACH","Value":"Acme Ltd"}]}`},
		{`{"ID":"ACCOUNT","Value":"000123456789"}`, `{"ID":"ACCOUNT","Value":"[REDACTED]"}`},
		{`{"ID":{"value":"ACCOUNT"},"Value":{"value":"000123456789"}}`, `{"ID":{"value":"ACCOUNT"},"Value":"[REDACTED]"}`},
		{`{"Attributes":[{"AttributeID":"SSN","AttributeDescription":"Social","Value":"078051120"},{"AttributeID":"COLOR","Value":"Red"}]}`,
			`{"Attributes":[{"AttributeID":"SSN","AttributeDescription":"Social","Value":"[REDACTED]"},{"AttributeID":"COLOR","Value":"Red"}]}`},
		{`{"Name":"Card Number","Value":"4111-XXXX"}`, `{"Name":"Card Number","Value":"[REDACTED]"}`},
		{`{"headers":[{"key":"api_secret","value":"s3cr3t"},{"key":"accept","value":"json"}]}`,
			`{"headers":[{"key":"api_secret","value":"[REDACTED]"},{"key":"accept","value":"json"}]}`},
		// Left alone.
		{`{"AttributeID":"COLOR","Value":"Red"}`, ``},
		{`{"name":"ACC-0001","value":12}`, ``},
		{`{"Account":"10100","Value":"500"}`, ``},
	}
	for _, c := range cases {
		checkRedaction(t, r, c.doc, c.want)
	}
}

// checkRedaction applies r to doc and compares the result with want ("":
// unchanged), and holds Inspect to it: true when something changes, false
// when nothing does.
func checkRedaction(t *testing.T, r *Redactor, doc, want string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	out, paths := applyPaths(r, v)
	got, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if want == "" {
		want = doc
		if len(paths) > 0 {
			t.Errorf("%s: redacted %v", doc, paths)
		}
	}
	if string(got) != canonical(t, want) {
		t.Errorf("%s\n got %s\nwant %s", doc, got, want)
	}
	if ins := r.Inspect([]byte(doc)); ins != (len(paths) > 0) {
		t.Errorf("Inspect(%s) = %v, but Apply redacted %v", doc, ins, paths)
	}
	if ins, err := r.InspectChecked([]byte(doc)); err != nil || ins != (len(paths) > 0) {
		t.Errorf("InspectChecked(%s) = %v, %v, but Apply redacted %v", doc, ins, err, paths)
	}
}

// canonical is doc as encoding/json writes it (members sorted).
func canonical(t *testing.T, doc string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
