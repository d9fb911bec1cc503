package acumaticatest

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// decimalUnits is the fixed-point base of Decimal: 10^-8, the largest
// scale Acumatica uses (currency rates).
const decimalUnits = 100_000_000

// Decimal is an exact fixed-point number with 8 fractional digits, the
// simulator's representation of SQL decimal columns. Formatting with a
// column's scale reproduces the trailing zeros Acumatica prints
// (money 4 places, quantities and prices 6, rates 8).
type Decimal int64

// DecimalFromCents returns c hundredths.
func DecimalFromCents(c int64) Decimal { return Decimal(c * (decimalUnits / 100)) }

// DecimalFromInt returns the integer n.
func DecimalFromInt(n int64) Decimal { return Decimal(n * decimalUnits) }

// ParseDecimal parses a plain decimal literal such as "-12.3400".
func ParseDecimal(s string) (Decimal, error) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return 0, fmt.Errorf("invalid decimal %q", s)
	}
	if len(frac) > 8 {
		if strings.Trim(frac[8:], "0") != "" {
			return 0, fmt.Errorf("decimal %q has more than 8 fractional digits", s)
		}
		frac = frac[:8]
	}
	frac += strings.Repeat("0", 8-len(frac))
	if intPart == "" {
		intPart = "0"
	}
	i, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || i > (1<<62)/decimalUnits {
		return 0, fmt.Errorf("invalid decimal %q", s)
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid decimal %q", s)
	}
	d := Decimal(i*decimalUnits + f)
	if neg {
		d = -d
	}
	return d, nil
}

// DecimalFromJSON reads a JSON number's text (a plain decimal or one with
// an exponent, "1.5e-3") exactly, rounded half away from zero to the 8
// places a Decimal keeps. A number beyond the Decimal's range is an
// error, as one beyond .NET's decimal is for Json.NET.
func DecimalFromJSON(s string) (Decimal, error) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(strings.TrimPrefix(s[i+1:], "+"), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("invalid decimal %q", s)
		}
		mant, exp = s[:i], e
	}
	r, ok := new(big.Rat).SetString(mant)
	if !ok || strings.ContainsAny(mant, "/xXpP_") {
		return 0, fmt.Errorf("invalid decimal %q", s)
	}
	// A nonzero mantissa of n characters is below 10^n and at least
	// 10^-n: an exponent far beyond that is zero or out of range without
	// computing 10^exp.
	n := int64(len(mant))
	switch {
	case r.Sign() == 0 || exp < -(n+10):
		return 0, nil
	case exp > n+30:
		return 0, fmt.Errorf("decimal %q out of range", s)
	}
	pow := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(exp)), nil))
	if exp >= 0 {
		r.Mul(r, pow)
	} else {
		r.Quo(r, pow)
	}
	r.Mul(r, big.NewRat(decimalUnits, 1))
	q, rem := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if rem.Abs(rem).Mul(rem, big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() || q.Int64() > 1<<62 || q.Int64() < -(1<<62) {
		return 0, fmt.Errorf("decimal %q out of range", s)
	}
	return Decimal(q.Int64()), nil
}

func abs(n int64) int64 { return max(n, -n) }

// Round rounds d to scale (0..8) fractional digits, half away from zero,
// as a value is stored in a decimal column of that scale.
func (d Decimal) Round(scale int) Decimal {
	if scale >= 8 || scale < 0 {
		return d
	}
	unit := int64(1)
	for i := scale; i < 8; i++ {
		unit *= 10
	}
	if d >= 0 {
		return Decimal((int64(d) + unit/2) / unit * unit)
	}
	return -Decimal((-int64(d) + unit/2) / unit * unit)
}

func mustDecimal(s string) Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Format prints d with exactly scale fractional digits (truncating any
// beyond). A negative scale prints the shortest form with at least one
// fractional digit ("1.0", "201.73"), the way Acumatica prints values the
// graph computed in memory rather than read from the database.
func (d Decimal) Format(scale int) string {
	neg := d < 0
	u := int64(d)
	if neg {
		u = -u
	}
	frac := fmt.Sprintf("%08d", u%decimalUnits)
	switch {
	case scale < 0:
		frac = strings.TrimRight(frac, "0")
		if frac == "" {
			frac = "0"
		}
	case scale == 0:
		frac = ""
	default:
		frac = frac[:min(scale, 8)]
	}
	s := strconv.FormatInt(u/decimalUnits, 10)
	if frac != "" {
		s += "." + frac
	}
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	return s
}

// String prints the shortest exact form.
func (d Decimal) String() string { return d.Format(-1) }

// Float64 converts d (for tolerance-free comparisons prefer Format).
func (d Decimal) Float64() float64 { return float64(d) / decimalUnits }

// Add returns d+o.
func (d Decimal) Add(o Decimal) Decimal { return d + o }

// Sub returns d-o.
func (d Decimal) Sub(o Decimal) Decimal { return d - o }

// MulInt returns d*n.
func (d Decimal) MulInt(n int64) Decimal { return d * Decimal(n) }

// Mul returns d*o rounded half away from zero to the given number of
// fractional digits (0..8).
func (d Decimal) Mul(o Decimal, scale int) Decimal {
	p := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(int64(o)))
	// p has 16 fractional digits; keep scale of them.
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(16-scale)), nil)
	q, r := new(big.Int).QuoRem(p, div, new(big.Int))
	r.Abs(r).Mul(r, big.NewInt(2))
	if r.Cmp(div) >= 0 {
		if p.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	mul := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(8-scale)), nil)
	return Decimal(q.Mul(q, mul).Int64())
}

// Cmp compares d and o: -1, 0 or +1.
func (d Decimal) Cmp(o Decimal) int {
	switch {
	case d < o:
		return -1
	case d > o:
		return 1
	}
	return 0
}
