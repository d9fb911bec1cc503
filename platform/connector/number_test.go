package connector

import (
	"math/big"
	"strings"
	"testing"
)

// ExactNumber reads amounts exactly and refuses numbers whose value would
// need more than MaxNumberBits, whatever the length of their text.
func TestExactNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // as big.Rat.RatString, or "" when refused
	}{
		{"12.5", "25/2"},
		{"-0.001", "-1/1000"},
		{"1e3", "1000"},
		{"1E-2", "1/100"},
		{"1e1000", "1" + strings.Repeat("0", 1000)}, // 3,322 bits
		{"1e2000", ""},    // 6,644 bits
		{"1e-100000", ""}, // ten bytes, refused before big.Rat reads it
		{"1e99999999999999999999", ""},
		{strings.Repeat("9", 1300), ""}, // 4,319 bits
		{"abc", ""},
		{"", ""},
	} {
		r, ok := ExactNumber(c.in)
		got := ""
		if ok {
			got = r.RatString()
		}
		if got != c.want {
			t.Errorf("ExactNumber(%.30q) = %.40q, %v; want %.40q", c.in, got, ok, c.want)
		}
	}
	// The bound itself: 2^4096 - 1 fits, 2^4096 does not.
	top := new(big.Int).Lsh(big.NewInt(1), MaxNumberBits)
	if _, ok := ExactNumber(new(big.Int).Sub(top, big.NewInt(1)).String()); !ok {
		t.Error("2^4096-1 refused")
	}
	if _, ok := ExactNumber(top.String()); ok {
		t.Error("2^4096 accepted")
	}
}
