package connector

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// FuzzCallDecode decodes any arguments into a tool's argument struct:
// the result is either the values the JSON holds (a whole number written
// 5.0 or 1e2 taken as that integer) or an INVALID_ARGUMENT in plain words,
// never Go's type names.
func FuzzCallDecode(f *testing.F) {
	for _, seed := range []string{
		`{"limit":5.0}`, `{"limit":5.000,"qty":2.5}`, `{"limit":0.5E1}`, `{"limit":1e2}`, `{"limit":-0.0}`,
		`{"limit":7,"days":[1.0,2e0,3]}`, `{"limit":5.5}`, `{"limit":1e400}`, `{"days":[1.5]}`,
		`{"names":"a"}`, `{"flag":"yes"}`, `{"unknown":true}`, `{"limit":1e3,"names":["x"],"flag":true,"qty":1180.0}`,
		`{"limit":9223372036854775807.0}`, `{"days":[256.0]}`, `null`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	type page struct {
		Limit *int `json:"limit"`
	}
	type args struct {
		page
		Qty   json.Number `json:"qty"`
		Days  []uint8     `json:"days"`
		Names []string    `json:"names"`
		Flag  bool        `json:"flag"`
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var a args
		err := (&Call{Args: json.RawMessage(raw)}).Decode(&a)
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || te.Message == "" {
				t.Fatalf("%q: %v, want INVALID_ARGUMENT", raw, err)
			}
			for _, lib := range []string{"must be int", "uint8", "[]string", "must be bool", "page.", "json:", "Go value", "args."} {
				if strings.Contains(te.Message, lib) {
					t.Fatalf("%q: message %q carries Go's text (%q)", raw, te.Message, lib)
				}
			}
			return
		}
		if len(raw) == 0 {
			return
		}
		// The reference: the same JSON read with numbers as exact
		// rationals.
		var ref map[string]json.RawMessage
		if json.Unmarshal(raw, &ref) != nil {
			return // null
		}
		if l, ok := ref["limit"]; ok && string(l) != "null" {
			want, ok := new(big.Rat).SetString(string(l))
			if !ok || a.Limit == nil || want.Cmp(new(big.Rat).SetInt64(int64(*a.Limit))) != 0 {
				t.Fatalf("%q: limit %v, want %s", raw, a.Limit, l)
			}
		}
		if q, ok := ref["qty"]; ok && a.Qty != "" {
			text := string(q)
			_ = json.Unmarshal(q, &text) // a number in a string is taken too
			want, ok1 := new(big.Rat).SetString(text)
			got, ok2 := new(big.Rat).SetString(a.Qty.String())
			if !ok1 || !ok2 || want.Cmp(got) != 0 {
				t.Fatalf("%q: qty %q, want %s", raw, a.Qty, q)
			}
		}
	})
}

// FuzzERPWord: a word from an ERP's answer is kept printable, at most 40
// bytes and an ellipsis, and in valid UTF-8 when it came so.
func FuzzERPWord(f *testing.F) {
	for _, seed := range []string{"24.200.001", "v15.40.2", "", "\x00\x1b[31m", strings.Repeat("é", 30), "v" + strings.Repeat("é", 30), "PX.Data.PXException: Ошибка авторизации пользователя"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := ERPWord(s)
		if len(strings.TrimSuffix(w, "…")) > 40 || w == "" {
			t.Fatalf("ERPWord(%q) = %q", s, w)
		}
		for _, r := range w {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("ERPWord(%q) = %q holds a control character", s, w)
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(w) {
			t.Fatalf("ERPWord(%q) = %q is not valid UTF-8", s, w)
		}
	})
}
