package mcpengine

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

func TestPlainNumbers(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"credit_limit":0.1e7}`, `{"credit_limit":1000000}`},
		{`{"items":[{"qty":1E3,"rate":1.5e-3}]}`, `{"items":[{"qty":1000,"rate":0.0015}]}`},
		{`{"qty":1.50e1}`, `{"qty":15.0}`},
		{`{"qty":-2.5e+2}`, `{"qty":-250}`},
		// No exponent: the arguments as they came, byte for byte.
		{`{"rate":10.00500000000000000001, "text":"1e3 <b>"}`, `{"rate":10.00500000000000000001, "text":"1e3 <b>"}`},
	}
	for _, c := range cases {
		got, err := plainNumbers(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("plainNumbers(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// FuzzPlainNumbers: for any JSON value whose numbers are within the bound
// the argument check enforces, the rewrite is JSON again, holds no number
// with an exponent, and holds the same values: every number equal to the
// original's exactly, every string and structure unchanged.
func FuzzPlainNumbers(f *testing.F) {
	f.Add(`{"credit_limit":0.1e7}`)
	f.Add(`{"items":[{"qty":1E3,"rate":1.5e-3}],"note":"1e3"}`)
	f.Add(`[-0e0, 1e-20, 123.456e2, "x", null, true]`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) || len(in) > 1000 {
			return
		}
		var before, after any
		if err := unmarshalNumbers(json.RawMessage(in), &before); err != nil {
			t.Fatal(err)
		}
		if _, huge := oversizedNumber(before); huge {
			return // refused by the argument check before a write sees it
		}
		out, err := plainNumbers(json.RawMessage(in))
		if err != nil {
			t.Fatalf("plainNumbers(%s): %v", in, err)
		}
		if err := unmarshalNumbers(out, &after); err != nil {
			t.Fatalf("plainNumbers(%s) = %s, not JSON: %v", in, out, err)
		}
		if !sameValues(before, after) {
			t.Fatalf("plainNumbers(%s) = %s: the values differ", in, out)
		}
	})
}

func unmarshalNumbers(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// sameValues compares two decoded JSON values, numbers by exact value;
// a number in b must be written without an exponent.
func sameValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameValues(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || strings.ContainsAny(string(y), "eE") {
			return false
		}
		r1, ok1 := new(big.Rat).SetString(string(x))
		r2, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && r1.Cmp(r2) == 0
	}
	return a == b
}
