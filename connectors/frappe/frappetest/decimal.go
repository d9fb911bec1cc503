package frappetest

import (
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number with nine fractional digits, the
// precision of Frappe's decimal(21,9) Currency/Float/Percent columns. It is
// serialised as a JSON float, as Frappe does via Python float(Decimal).
type Decimal int64

// decimalScale is the number of Decimal units in 1.
const decimalScale = 1_000_000_000

// Cents returns the Decimal for an amount in hundredths.
func Cents(c int64) Decimal { return Decimal(c * (decimalScale / 100)) }

// Units returns the Decimal for a whole number.
func Units(n int64) Decimal { return Decimal(n * decimalScale) }

// Cents returns the value in hundredths, rounded half away from zero.
func (d Decimal) Cents() int64 {
	const unit = decimalScale / 100
	if d >= 0 {
		return (int64(d) + unit/2) / unit
	}
	return -((-int64(d) + unit/2) / unit)
}

// Round rounds d to places (0..9) decimals, half away from zero: what
// frappe.utils.flt(value, precision) does to a positive value under the
// default rounding_method, "Banker's Rounding (legacy)" (a tie rounds up
// when precision > 0).
func (d Decimal) Round(places int) Decimal {
	unit := int64(1)
	for i := places; i < 9; i++ {
		unit *= 10
	}
	if d >= 0 {
		return Decimal((int64(d) + unit/2) / unit * unit)
	}
	return -Decimal((-int64(d) + unit/2) / unit * unit)
}

// RoundHalfEven rounds d to places (0..9) decimals, a tie to the even
// digit: frappe.utils.flt(value, precision) under "Banker's Rounding"
// (_bankers_rounding), and under "Banker's Rounding (legacy)" at
// precision 0.
func (d Decimal) RoundHalfEven(places int) Decimal {
	unit := int64(1)
	for i := places; i < 9; i++ {
		unit *= 10
	}
	v, neg := int64(d), d < 0
	if neg {
		v = -v
	}
	q, rem := v/unit, v%unit
	if rem*2 > unit || rem*2 == unit && q%2 == 1 {
		q++
	}
	if neg {
		return -Decimal(q * unit)
	}
	return Decimal(q * unit)
}

// String returns the plain decimal text with nine fractional digits, as
// MariaDB renders a decimal(21,9) value (e.g. "1180.500000000").
func (d Decimal) String() string {
	neg := d < 0
	v := int64(d)
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v/decimalScale, 10) + "." + leftPad(strconv.FormatInt(v%decimalScale, 10), 9)
	if neg {
		return "-" + s
	}
	return s
}

// Float64 returns the nearest float64, exactly like Python's float(Decimal).
func (d Decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Rat returns the exact value as a rational.
func (d Decimal) Rat() *big.Rat { return big.NewRat(int64(d), decimalScale) }

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// decimalFromRat rounds r half away from zero to nine decimals.
func decimalFromRat(r *big.Rat) Decimal {
	return Decimal(roundRat(r, 9).Int64())
}

// roundRat returns r scaled by 10^scale and rounded half away from zero.
func roundRat(r *big.Rat, scale int) *big.Int {
	m := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	num := new(big.Int).Set(m.Num())
	den := m.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	if new(big.Int).Mul(rem, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// parseDecimal parses a plain decimal literal; ok is false if s is not one.
func parseDecimal(s string) (Decimal, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return 0, false
	}
	return decimalFromRat(r), true
}

// ratioDecimal returns num/den (den != 0) as a Decimal rounded half away
// from zero, without big arithmetic when the product fits 128 bits.
func ratioDecimal(num, den int64) Decimal {
	neg := (num < 0) != (den < 0)
	n, d := uint64(abs64(num)), uint64(abs64(den))
	hi, lo := bits.Mul64(n, decimalScale)
	if hi >= d {
		return decimalFromRat(big.NewRat(num, den))
	}
	q, r := bits.Div64(hi, lo, d)
	if r >= d-r {
		q++
	}
	if neg {
		return -Decimal(q)
	}
	return Decimal(q)
}
