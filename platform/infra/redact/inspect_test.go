package redact

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestInspectFindsWhatApplyWouldChange(t *testing.T) {
	r := New(Rules{Add: []string{"EmployeeNotes"}, Skip: []string{"BirthDate"}})
	cases := []struct {
		doc  string
		want bool
	}{
		{`{"data":[{"name":"CUST-1","customer_name":"Acme"}],"meta":{"returned":1}}`, false},
		{`{"data":[{"name":"CUST-1","tax_id":"GB123"}]}`, true},
		{`{"rows":[{"note":"4111 1111 1111 1111"}]}`, true},
		{`{"rows":[{"note":"4111 1111 1111 1112"}]}`, false}, // fails the Luhn check
		{`{"ref":"078-05-1120"}`, true},
		{`{"ref":"  078-05-1120  "}`, true},
		{`{"BirthDate":"1980-01-01"}`, false}, // skipped
		{`{"employee_notes":"x"}`, true},      // added pattern
		{`{"t\u0061x_id":"GB123"}`, true},     // escaped name
		{`{"note":"078\u002d05-1120"}`, true}, // escaped value
		{`{"text":"a \"quoted\" tax_id in text"}`, false},
		{`{"grand_total":4111111111111111}`, true},    // a card number sent as a number
		{`{"grand_total":4111111111111111.5}`, false}, // a decimal is an amount
		{`{"created_ms":1700000000000}`, false},       // a timestamp
		{`{"a":"unterminated`, true},
		{`{"list":["078-05-1120"]}`, true},
		{`{"list":["plain", "values"], "n": null, "b": true}`, false},
	}
	for _, c := range cases {
		if got := r.Inspect([]byte(c.doc)); got != c.want {
			t.Errorf("Inspect(%s) = %v, want %v", c.doc, got, c.want)
		}
		agreeChecked(t, r, []byte(c.doc))
		var v any
		if json.Unmarshal([]byte(c.doc), &v) == nil {
			if _, paths := applyPaths(r, v); len(paths) > 0 && !r.Inspect([]byte(c.doc)) {
				t.Errorf("Inspect(%s) missed %v", c.doc, paths)
			}
		}
	}
}

// TestInspectNeverMissesARedaction generates documents from names and
// values that are and are not sensitive, and checks that whenever Apply
// redacts something, Inspect said it would.
func TestInspectNeverMissesARedaction(t *testing.T) {
	r := New(Rules{})
	names := []string{"name", "customer", "tax_id", "TaxID", "iban", "grand_total", "date_of_birth", "notes", "Password Hash", "bank account",
		"Value", "value", "ID", "Description", "ss_no", "adobe_id"}
	values := []any{"Acme Ltd", "078-05-1120", "4111-1111-1111-1111", "4111 1111 1111 1112", "", "[REDACTED]", json.Number("12.50"), nil, true,
		"ACC-SINV-2025-00001", " 5500 0000 0000 0004 ", "\t078-05-1120", "ACCOUNT", "Card Number", "078051120",
		"Pay DE89 3704 0044 0532 0130 00 now", json.Number("4111111111111111"), json.Number("1700000000000")}
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(4); {
		case depth > 3 || k == 0:
			return values[rng.IntN(len(values))]
		case k == 1:
			arr := make([]any, rng.IntN(3))
			for i := range arr {
				arr[i] = gen(depth + 1)
			}
			return arr
		default:
			obj := map[string]any{}
			for range rng.IntN(4) {
				obj[names[rng.IntN(len(names))]] = gen(depth + 1)
			}
			return obj
		}
	}
	redacted := 0
	for i := range 5000 {
		doc := map[string]any{"data": gen(0)}
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		_ = json.Unmarshal(raw, &v)
		_, paths := applyPaths(r, v)
		if len(paths) > 0 {
			redacted++
			if !r.Inspect(raw) {
				t.Fatalf("document %d: Apply redacted %v but Inspect saw nothing in %s", i, paths, raw)
			}
		}
		agreeChecked(t, r, raw)
	}
	if redacted == 0 {
		t.Fatal("the generator produced nothing to redact")
	}
}

// agreeChecked holds InspectChecked to Inspect on valid JSON, and to
// refusing (or reporting true) on anything else.
func agreeChecked(t *testing.T, r *Redactor, doc []byte) {
	t.Helper()
	got, err := r.InspectChecked(doc)
	if json.Valid(doc) {
		if want := r.Inspect(doc); got != want || err != nil {
			t.Fatalf("InspectChecked(%s) = %v, %v; Inspect says %v", doc, got, err, want)
		}
		return
	}
	if !got && err == nil {
		t.Fatalf("InspectChecked(%s) accepted invalid JSON", doc)
	}
}

// TestInspectDecodesEscapesWithoutAllocating: real ERPs escape every
// non-ASCII character, so escaped names and values are common.
func TestInspectDecodesEscapesWithoutAllocating(t *testing.T) {
	r := New(Rules{})
	doc := []byte(`{"data":[{"customer_name":"M\u00fcller \u0026 S\u00f6hne GmbH","t\u0065rritory":"Deutschland","ref":"078\u002d05-1120x"}]}`)
	if r.Inspect(doc) {
		t.Fatal("nothing to redact")
	}
	if n := testing.AllocsPerRun(50, func() { r.Inspect(doc) }); n != 0 {
		t.Errorf("Inspect allocates %v times", n)
	}
	if n := testing.AllocsPerRun(50, func() { _, _ = r.InspectChecked(doc) }); n != 0 {
		t.Errorf("InspectChecked allocates %v times", n)
	}
}

func TestInspectCheckedRefusesInvalidJSON(t *testing.T) {
	r := New(Rules{})
	for _, doc := range []string{`{"name":"x"`, `{"name":"x"} x`, `{"name":x}`, `[1,]`, "{\"a\":\"\xff\"}", ``} {
		if got, err := r.InspectChecked([]byte(doc)); got || err == nil {
			t.Errorf("InspectChecked(%q) = %v, %v; want an error", doc, got, err)
		}
	}
}

func FuzzInspectChecked(f *testing.F) {
	for _, s := range []string{`{"data":[{"name":"CUST-1","tax_id":"GB123"}]}`, `{"t\u0061x_id":1}`, `{"list":["078-05-1120"]}`, `{"a":"unterminated`, `[]`} {
		f.Add([]byte(s))
	}
	r := New(Rules{})
	f.Fuzz(func(t *testing.T, doc []byte) {
		if utf8.Valid(doc) {
			agreeChecked(t, r, doc)
		}
	})
}

func BenchmarkInspect(b *testing.B) {
	r := New(Rules{})
	var rows []string
	for i := range 20 {
		rows = append(rows, fmt.Sprintf(`{"name":"CUST-%05d","customer_name":"Customer %d","customer_type":"Company","customer_group":"Commercial","territory":"New Zealand","default_currency":"NZD","disabled":0}`, i, i))
	}
	doc := []byte(`{"data":[` + strings.Join(rows, ",") + `],"meta":{"offset":0,"limit":20,"returned":20,"next_offset":20}}`)
	b.Run("inspect", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if r.Inspect(doc) {
				b.Fatal("nothing to redact")
			}
		}
	})
	// What the engine does with a result a connector passed on as JSON
	// text: check it and inspect it, in one reading.
	b.Run("checked", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if found, err := r.InspectChecked(doc); found || err != nil {
				b.Fatal("nothing to redact")
			}
		}
	})
}

// FuzzInspectNeverMisses: whenever Apply would change a document, Inspect
// says so (the engine skips Apply when it does not).
func FuzzInspectNeverMisses(f *testing.F) {
	for _, s := range []string{`{"ID":"ACCOUNT","Value":"1"}`, `{"n":4111111111111111}`, `{"t":"x DE89370400440532013000"}`, `{"ss_no":"078051120"}`, `{"a":[{"key":"api_secret","value":"x"}]}`} {
		f.Add([]byte(s))
	}
	r := New(Rules{})
	f.Fuzz(func(t *testing.T, doc []byte) {
		dec := json.NewDecoder(strings.NewReader(string(doc)))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || !utf8.Valid(doc) || !json.Valid(doc) {
			return
		}
		if _, paths := applyPaths(r, v); len(paths) > 0 && !r.Inspect(doc) {
			t.Fatalf("Apply redacted %v but Inspect saw nothing in %s", paths, doc)
		}
	})
}
