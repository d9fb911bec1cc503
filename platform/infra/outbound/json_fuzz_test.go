package outbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// FuzzUnmarshalJSON: an ERP body is read when encoding/json says it is
// one JSON value, and then as encoding/json reads it (numbers kept as
// written); anything else, trailing bytes after a value included, is
// UPSTREAM_INVALID_RESPONSE with a message that quotes none of the body.
// An answer that goes on after its value was not read whole, and must
// never pass for a complete one (an empty list read as "no records").
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"name":"ACC-SINV-2025-00001","grand_total":1150.5}]}`,
		`{"value":[]}`,
		`[]`, `null`, `0.10`, ` "x" `, ``, `   `,
		`{"data":[]}<html><body>Server Error</body></html>`,
		`{"data":[]} {"data":[{"name":"x"}]}`,
		`{"a":1e400}`, `{"a":`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got any
		err := UnmarshalJSON(body, &got)
		valid := json.Valid(body)
		if (err == nil) != valid {
			t.Fatalf("UnmarshalJSON(%q) = %v, but json.Valid = %v", body, err, valid)
		}
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.UpstreamInvalidResponse {
				t.Fatalf("UnmarshalJSON(%q) = %v, want UPSTREAM_INVALID_RESPONSE", body, err)
			}
			if len(bytes.TrimSpace(body)) >= 4 && bytes.Contains([]byte(te.Message), bytes.TrimSpace(body)) {
				t.Fatalf("message %q quotes the body %q", te.Message, body)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("UnmarshalJSON(%q) = %#v, encoding/json reads %#v", body, got, want)
		}
	})
}
