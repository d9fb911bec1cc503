package frappe

import (
	"encoding/json"
	"testing"
)

func TestDecimalTextIsExact(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{json.Number("1180.5"), "1180.5"},
		{json.Number("1e+16"), "10000000000000000"},
		{json.Number("1.5E-3"), "0.0015"},
		{json.Number("-0.0"), "0"},
		{json.Number("-12.340"), "-12.34"},
		{"", "0"},
		{nil, "0"},
		{"  7.25 ", "7.25"},
	} {
		r, ok := decimalText(tc.in)
		if !ok {
			t.Fatalf("%v: not a number", tc.in)
		}
		if got := decimalNumber(r).String(); got != tc.want {
			t.Errorf("%v = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []any{"1/3", "NaN", "Infinity", "1_000", "abc", true, 1.5} {
		if _, ok := decimalText(bad); ok {
			t.Errorf("%v was read as a number", bad)
		}
	}
}

func TestDecimalSumHasNoFloatError(t *testing.T) {
	var s decimalSum
	for i := 0; i < 10; i++ {
		s.add(json.Number("0.1"))
	}
	s.add(json.Number("0.2"))
	if got := s.number(); got != "1.2" {
		t.Fatalf("sum = %s, want 1.2", got)
	}
	var big decimalSum
	big.add(json.Number("9007199254740993.01"))
	big.add(json.Number("0.01"))
	if got := big.number(); got != "9007199254740993.02" {
		t.Fatalf("sum = %s", got)
	}
}

func TestRoundRat(t *testing.T) {
	for _, tc := range []struct {
		in     string
		places int
		want   string
	}{
		{"2.345", 2, "2.35"}, {"-2.345", 2, "-2.35"}, {"0.004", 2, "0.00"}, {"-0.004", 2, "0.00"}, {"12", 2, "12.00"}, {"0.5", 0, "1"},
	} {
		r, _ := parseDecimal(tc.in)
		if got := roundRat(r, tc.places); got != tc.want {
			t.Errorf("roundRat(%s, %d) = %s, want %s", tc.in, tc.places, got, tc.want)
		}
	}
}
