package acumatica

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector/rawjson"
)

// unwrapOracle is unwrapRecord on the decoded record, as JSON values.
func unwrapOracle(t *testing.T, rec []byte) any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(rec))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("oracle decode: %v", err)
	}
	return reencode(t, unwrapRecord(m))
}

// reencode returns v as encoding/json would decode its encoding, numbers
// kept as written.
func reencode(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decodeExact(t, b)
}

func decodeExact(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestRawUnwrapMatchesUnwrapRecordOnSamples(t *testing.T) {
	for _, name := range recordSamples {
		raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			t.Fatal(err)
		}
		recs := []json.RawMessage{raw}
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			if recs, err = rawjson.Elements(raw); err != nil {
				t.Fatal(err)
			}
		}
		for i, rec := range recs {
			got, err := appendUnwrappedRecord(nil, bytes.TrimSpace(rec))
			if err != nil {
				t.Fatalf("%s[%d]: %v", name, i, err)
			}
			if !rawjson.Valid(got) {
				t.Fatalf("%s[%d]: invalid JSON %s", name, i, got)
			}
			if want := unwrapOracle(t, rec); !reflect.DeepEqual(decodeExact(t, got), want) {
				t.Errorf("%s[%d]:\n got %s\nwant %v", name, i, got, want)
			}
		}
	}
}

func TestRawUnwrapCases(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"1","rowNumber":1,"_links":{"self":"/x"},"CustomerID":{"value":"C1"},"Note":{},"Amount":{"value":30.0000}}`:     `{"id":"1","CustomerID":"C1","Note":null,"Amount":30.0000}`,
		`{"Qty":{"value":-1,"error":"must be positive"},"Bad":{"error":"no value"},"Blank":{"value":2,"error":""}}`:            `{"Qty":{"value":-1,"error":"must be positive"},"Bad":{"error":"no value"},"Blank":2}`,
		`{"MainContact":{"id":"c","Email":{"value":"a@b"}},"Details":[{"id":"d","Qty":{"value":1}},3,null]}`:                   `{"MainContact":{"id":"c","Email":"a@b"},"Details":[{"id":"d","Qty":1},3,null]}`,
		`{"custom":{"Document":{"AttributeCOLOR":{"type":"CustomStringField","value":"Red"},"Plain":5,"NoValue":{}},"Raw":7}}`: `{"custom":{"Document":{"AttributeCOLOR":"Red","Plain":5,"NoValue":null},"Raw":7}}`,
		`{"custom":{},"files":[{"id":"f"}],"error":"whole record"}`:                                                            `{"files":[{"id":"f"}],"error":"whole record"}`,
		`{"custom":[], "Name":{"value":"Caf\u00e9"}}`:                                                                          `{"Name":"Caf\u00e9"}`,
	} {
		got, err := appendUnwrappedRecord(nil, []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("unwrap %s\n got %s (%v)\nwant %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"a":{"value":1}`, `{"a":[1,}`, `[{"a":1}]`, `{"a":{"value":01}}`} {
		if _, err := appendUnwrappedRecord(nil, []byte(bad)); err == nil {
			t.Errorf("unwrap %s: no error", bad)
		}
	}
}

// FuzzRawUnwrap holds appendUnwrappedRecord to unwrapRecord for every
// record object without repeated names (which Acumatica never sends, and
// which maps cannot represent).
func FuzzRawUnwrap(f *testing.F) {
	for _, name := range recordSamples {
		raw, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			f.Fatal(err)
		}
		if recs, err := rawjson.Elements(raw); err == nil {
			for _, r := range recs {
				f.Add([]byte(r))
			}
		} else {
			f.Add(raw)
		}
	}
	f.Add([]byte(`{"custom":{"D":{"A":{"value":1},"B":2}},"x":{"value":{"value":1}},"y":[{"value":1},{"id":1}],"z":{"error":""}}`))
	f.Fuzz(func(t *testing.T, rec []byte) {
		if !utf8.Valid(rec) || !json.Valid(rec) || hasRepeatedNames(rec) {
			return
		}
		var obj map[string]any
		if json.Unmarshal(rec, &obj) != nil || obj == nil {
			if _, err := appendUnwrappedRecord(nil, rec); err == nil {
				t.Fatalf("unwrapped %s, which is not an object", rec)
			}
			return
		}
		got, err := appendUnwrappedRecord(nil, rec)
		if err != nil {
			t.Fatalf("unwrap %s: %v", rec, err)
		}
		if !rawjson.Valid(got) {
			t.Fatalf("unwrap %s gave invalid JSON %s", rec, got)
		}
		if want := unwrapOracle(t, rec); !reflect.DeepEqual(decodeExact(t, got), want) {
			t.Fatalf("unwrap %s\n got %s\nwant %v", rec, got, want)
		}
		// A page's rows, which rawjson has checked, take the checked
		// walks: the same bytes.
		checked, err := appendCheckedRecord(nil, rec)
		if err != nil || !bytes.Equal(checked, got) {
			t.Fatalf("checked unwrap of %s\n got %s (%v)\nwant %s", rec, checked, err, got)
		}
	})
}

// hasRepeatedNames reports whether any object in the valid text b repeats
// a member name.
func hasRepeatedNames(b []byte) bool {
	b = bytes.TrimSpace(b)
	switch b[0] {
	case '{':
		fields, _ := rawjson.Fields(b)
		seen := map[string]bool{}
		for _, f := range fields {
			var name string
			_ = json.Unmarshal(f.Name, &name)
			if seen[name] || hasRepeatedNames(f.Value) {
				return true
			}
			seen[name] = true
		}
	case '[':
		els, _ := rawjson.Elements(b)
		for _, e := range els {
			if hasRepeatedNames(e) {
				return true
			}
		}
	}
	return false
}

// BenchmarkUnwrapPage is a list tool's work on a page of 20 customers
// (the real sample record, repeated): the checking split into rows, then
// each row unwrapped by the checked walks.
func BenchmarkUnwrapPage(b *testing.B) {
	one, err := os.ReadFile(filepath.Join("testdata", "samples", "customer-list-top1-200.json"))
	if err != nil {
		b.Fatal(err)
	}
	rec := bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(one), []byte("[")), []byte("]"))
	page := []byte("[")
	for i := range 20 {
		if i > 0 {
			page = append(page, ',')
		}
		page = append(page, rec...)
	}
	page = append(page, ']')
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		rows, err := rawjson.Elements(page)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := unwrappedEnvelope(rows, struct{}{}); err != nil {
			b.Fatal(err)
		}
	}
}
