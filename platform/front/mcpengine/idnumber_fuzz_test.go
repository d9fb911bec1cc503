package mcpengine

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// FuzzIntegralNumber: integralNumber takes a JSON number written with a
// point or an exponent exactly when its value is an integer, as exact
// arithmetic reads it (exponents of up to four digits here, so that the
// reference stays small).
func FuzzIntegralNumber(f *testing.F) {
	for _, s := range []string{"1.0", "1e3", "-2.50E+1", "10e-1", "1.5", "1e-3", "0.0e-5", "100e-2", "1000e-4", "12", "1.", "-0.0", "01.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := integralNumber([]byte(s))
		valid := json.Valid([]byte(s)) && !strings.ContainsAny(s, "[]{}\"ntf \t\r\n")
		if !valid {
			if got {
				t.Fatalf("integralNumber(%q) took text that is not a JSON number", s)
			}
			return
		}
		if wholeNumber([]byte(s)) {
			if got {
				t.Fatalf("integralNumber(%q) took a plain whole number, which is wholeNumber's", s)
			}
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(strings.TrimLeft(s[i+1:], "+-"), "0")) > 4 {
			return
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat cannot read the JSON number %q", s)
		}
		if want := r.IsInt(); got != want {
			t.Fatalf("integralNumber(%q) = %v, want %v", s, got, want)
		}
	})
}
