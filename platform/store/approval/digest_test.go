package approval

import (
	"encoding/json"
	"testing"
)

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		``: `{}`,
		` { "b" : 1 , "a" : [ true, null, "x" ] } `: `{"a":[true,null,"x"],"b":1}`,
		`{"n":1.50,"m":-0e3}`:                       `{"m":-0e3,"n":1.50}`,
		`{"s":"\u0041\n<"}`:                         `{"s":"A\n\u003c"}`,
		`{"z":{"y":1,"x":2}}`:                       `{"z":{"x":2,"y":1}}`,
	} {
		got, err := canonical([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1} {}`, `{"a":`, `[1,]`, `{"a":{"b":1,"b":1}}`} {
		if got, err := canonical([]byte(bad)); err == nil {
			t.Errorf("canonical(%s) = %s, want an error", bad, got)
		}
	}
}

func TestDigestSeparatesValues(t *testing.T) {
	a, _ := Digest(json.RawMessage(`{"qty":1}`))
	b, _ := Digest(json.RawMessage(`{"qty":"1"}`))
	c, _ := Digest(json.RawMessage(`{ "qty" : 1 }`))
	if a == b || a != c {
		t.Fatalf("digests: %x %x %x", a, b, c)
	}
}

func FuzzDigest(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}],"c":"d"}`, `{"a":1,"a":2}`, `"x"`, `[1.0e5]`, `{"é":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := canonical(in)
		if err != nil {
			return
		}
		if !json.Valid(c) {
			t.Fatalf("canonical(%q) = %q, not JSON", in, c)
		}
		again, err := canonical(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("canonical is not idempotent: %q -> %q -> %q (%v)", in, c, again, err)
		}
		var v1, v2 any
		if json.Unmarshal(in, &v1) == nil && json.Unmarshal(c, &v2) == nil {
			b1, _ := json.Marshal(v1)
			b2, _ := json.Marshal(v2)
			if string(b1) != string(b2) {
				t.Fatalf("canonical changed the value: %q -> %q", in, c)
			}
		}
	})
}
