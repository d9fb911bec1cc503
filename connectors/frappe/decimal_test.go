package frappe

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
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

func TestWithoutFloatNoise(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Python float sums and their shortest repr.
		{"4316.700000000001", "4316.7"},
		{"0.30000000000000004", "0.3"},
		{"-0.30000000000000004", "-0.3"},
		{"99999.99999999999", "100000"},
		{"1.0000000000000002e-05", "0.00001"},
		// Large: the 15th significant digit is the coarser.
		{"1.2345678901234567e+16", "12345678901234600"},
		{"123456789012345.67", "123456789012346"},
		// Cancelled amounts: the noise reaches the 13th digit, below the
		// 9th decimal place.
		{"-1787.8599999999933", "-1787.86"},
		{"-1787.85999999999", "-1787.86"},
		{"-0.08000000000000013", "-0.08"},
		// Below the 9th place.
		{"-7.0000000000000075e-06", "-0.000007"},
		{"5e-10", "0.000000001"},
		{"-4.9e-10", "0"},
		{"1e-11", "0"},
		// Nothing beyond either place: kept as sent.
		{"1180.5", "1180.5"},
		{"0.1", "0.1"},
		{"1e+16", "1e+16"},
		{"-12.340", "-12.340"},
		{"123456.123456789", "123456.123456789"},
		// A Python int is exact, however long.
		{"12345678901234567", "12345678901234567"},
		// Not a number: left for the caller to refuse.
		{"NaN", "NaN"},
	} {
		if got := withoutFloatNoise(json.Number(tc.in)); got != json.Number(tc.want) {
			t.Errorf("withoutFloatNoise(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzWithoutFloatNoise checks the rounding against math/big, and that
// decimal amounts come back exactly after float64 sums.
func FuzzWithoutFloatNoise(f *testing.F) {
	f.Add(int64(431670), int64(0), int8(-2))
	f.Add(int64(1), int64(2), int8(-1))
	f.Add(int64(-999999999999999), int64(1), int8(-10))
	f.Add(int64(123456789), int64(-987654321), int8(-4))
	f.Add(int64(-178786), int64(178785), int8(4))
	f.Fuzz(func(t *testing.T, a, b int64, exp int8) {
		const lim = 1_000_000_000_000_000 // 10^15
		e := int(exp)%12 - 6              // -17..5
		x, y := decimalOf(a%lim, e), decimalOf(b%lim, e)
		fx, _ := x.Float64()
		fy, _ := y.Float64()
		// A decimal of at most 15 digits survives float64; only places
		// beyond the 9th are rounded.
		if got := withoutFloatNoise(pyRepr(fx)); !ratEq(rat(t, got), roundNoise(x)) {
			t.Fatalf("%s through float64 came back as %s", x.FloatString(20), got)
		}
		// A float sum is rounded as math/big rounds it.
		in := pyRepr(fx + fy)
		got := withoutFloatNoise(in)
		if want := roundNoise(rat(t, in)); !ratEq(rat(t, got), want) {
			t.Fatalf("withoutFloatNoise(%s) = %s, want %s", in, got, want.FloatString(20))
		}
		if strings.ContainsAny(got.String(), "eE") && got != in {
			t.Fatalf("rounded %s is not plain: %s", in, got)
		}
		// The sum of two amounts (at most 9 places) comes back exactly:
		// adding amounts of one sign errs by less than half a unit of the
		// 15th digit; cancelling amounts below 10^5 by less than half a unit
		// of the 9th place.
		sum := new(big.Rat).Add(x, y)
		amounts := roundNoise(x).Cmp(x) == 0 && roundNoise(y).Cmp(y) == 0
		small := math.Abs(fx) < 1e5 && math.Abs(fy) < 1e5
		if amounts && (x.Sign()*y.Sign() >= 0 && roundNoise(sum).Cmp(sum) == 0 || small) && !ratEq(rat(t, got), sum) {
			t.Fatalf("%s + %s: %s, exact %s", x.FloatString(20), y.FloatString(20), got, sum.FloatString(20))
		}
	})
}

// decimalOf is m × 10^e.
func decimalOf(m int64, e int) *big.Rat {
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil))
	r := new(big.Rat).SetInt64(m)
	if e < 0 {
		return r.Quo(r, p)
	}
	return r.Mul(r, p)
}

// pyRepr is Python's repr of a float: the shortest text that reads back
// as f, with a point or an exponent.
func pyRepr(f float64) json.Number {
	return json.Number(strconv.FormatFloat(f, 'e', -1, 64))
}

// roundNoise rounds r half away from zero at its 15th significant digit
// or its 9th decimal place, whichever is coarser.
func roundNoise(r *big.Rat) *big.Rat {
	if r.Sign() == 0 {
		return r
	}
	ten := big.NewRat(10, 1)
	a := new(big.Rat).Abs(r)
	k := 0 // 10^(k-1) <= a < 10^k
	for p := big.NewRat(1, 1); a.Cmp(p) >= 0; p.Mul(p, ten) {
		k++
	}
	for p := big.NewRat(1, 10); a.Cmp(p) < 0; p.Quo(p, ten) {
		k--
	}
	scale := decimalOf(1, min(15-k, 9))
	m := new(big.Rat).Mul(a, scale)
	q, rem := new(big.Int).QuoRem(m.Num(), m.Denom(), new(big.Int))
	if new(big.Int).Mul(rem, big.NewInt(2)).Cmp(m.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	out := new(big.Rat).Quo(new(big.Rat).SetInt(q), scale)
	if r.Sign() < 0 {
		out.Neg(out)
	}
	return out
}

// A search title's amount is the ERP's, never rounded to cents: Frappe
// keeps amounts to the currency's precision (three places for a Kuwaiti
// or Bahraini dinar), and a title reading "KWD 12.35" for 12.345 misstated
// it. Amounts with fewer places show their currency's places (two for
// most, none for yen), as money is read.
func TestMoneyTextKeepsTheERPsPlaces(t *testing.T) {
	for _, c := range []struct {
		in     any
		places int
		want   string
	}{
		{json.Number("12.345"), 2, "12.345"},
		{json.Number("0.125"), 2, "0.125"},
		{json.Number("1250.5"), 2, "1250.50"},
		{json.Number("1500"), 2, "1500.00"},
		{json.Number("-3.1"), 2, "-3.10"},
		{json.Number("99.990000000"), 2, "99.99"},
		{json.Number("1e2"), 2, "100.00"},
		{nil, 2, "0.00"},
		{json.Number("1500"), 0, "1500"},
		{json.Number("1500.0"), 0, "1500"},
		{json.Number("1250.5"), 0, "1250.5"},
		{json.Number("12.5"), 3, "12.500"},
	} {
		if got := moneyText(c.in, c.places); got != c.want {
			t.Errorf("moneyText(%v, %d) = %q, want %q", c.in, c.places, got, c.want)
		}
	}
}
