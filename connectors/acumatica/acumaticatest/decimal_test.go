package acumaticatest

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

func TestDecimalFromJSON(t *testing.T) {
	for in, want := range map[string]string{
		"0.30000000000000004": "0.3", "19.999999999": "20.0", "1.234567895": "1.2345679", "-1.234567895": "-1.2345679",
		"1e3": "1000.0", "1.5E-3": "0.0015", "5e-9": "0.00000001", "4e-9": "0.0", "-0": "0.0", "1e-100000": "0.0",
		"123456789.12345678": "123456789.12345678", "0.00000000000000000000000000000000001e35": "1.0",
		"1000000000000000000000000000000000000000000000000000000000000000000000000e-70": "100.0",
	} {
		d, err := DecimalFromJSON(in)
		if err != nil || d.String() != want {
			t.Errorf("DecimalFromJSON(%s) = %s, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"1e31", "1e100000", "1e999999999999", "99999999999999999999", "1/3", "0x10", "", "-", "1e", "NaN"} {
		if d, err := DecimalFromJSON(in); err == nil {
			t.Errorf("DecimalFromJSON(%q) = %s, want an error", in, d)
		}
	}
}

// FuzzDecimalFromJSON: any JSON number is read without a panic, and one
// read is within half a unit of the 8th place of its exact value.
func FuzzDecimalFromJSON(f *testing.F) {
	for _, s := range []string{"0", "0.1", "0.30000000000000004", "-12.3400", "1e3", "1.5E-3", "1e-100000", "1e31", "19.999999999", "46116860184.27387903"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := DecimalFromJSON(s)
		var n json.Number
		if json.Unmarshal([]byte(s), &n) != nil || strings.ContainsAny(s, " \t\r\n\"") {
			return // not a JSON number: only no panic is asked
		}
		if err != nil {
			return
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 && len(s)-i > 4 {
			return // an exponent of many digits: exact comparison would be slow
		}
		exact, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("%q is a JSON number big.Rat does not read", s)
		}
		diff := new(big.Rat).Sub(exact, big.NewRat(int64(d), decimalUnits))
		if diff.Abs(diff).Cmp(big.NewRat(1, 2*decimalUnits)) > 0 {
			t.Fatalf("DecimalFromJSON(%s) = %s, more than half a unit from the exact value", s, d)
		}
		if back, err := DecimalFromJSON(d.String()); err != nil || back != d {
			t.Fatalf("DecimalFromJSON(%s) = %s, which reads back as %s, %v", s, d, back, err)
		}
	})
}
