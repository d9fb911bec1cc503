package frappe

import (
	"encoding/json"
	"math/big"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
)

// Amounts are exact. Frappe stores Currency and Float columns as
// decimal(21,9) and sends them as JSON numbers (Python floats whose text is
// the shortest round-trip form, e.g. 1180.5 or 1e+16). erpgate keeps that
// text as json.Number in every row it passes on, and every amount it adds up
// itself (totals, summaries, ageing) is computed with math/big.Rat from the
// text, never through float64, so a sum is exact to the cent and beyond.
// Reports compute running balances and totals as Python floats, so their
// numbers first lose any binary noise (withoutFloatNoise, applied to every
// report row as it is parsed).

// decimalText parses a JSON number, a numeric string or an integer into an
// exact rational. Empty strings and null are zero, as Frappe prints an
// all-zero cell of a report's total row as "". ok is false for anything
// that is not a number.
func decimalText(v any) (r *big.Rat, ok bool) {
	switch x := v.(type) {
	case nil:
		return new(big.Rat), true
	case json.Number:
		return parseDecimal(x.String())
	case string:
		if strings.TrimSpace(x) == "" {
			return new(big.Rat), true
		}
		return parseDecimal(x)
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	}
	return nil, false
}

// parseDecimal parses a decimal literal (optionally with an exponent). It
// refuses fractions such as "1/3", which big.Rat would otherwise accept,
// "NaN"/"Infinity", and numbers beyond connector.MaxNumberBits, which are not
// amounts.
func parseDecimal(s string) (*big.Rat, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "/_") {
		return nil, false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return nil, false
		}
	}
	// The loops over an amount's digits (terminatingPlaces, intDigits,
	// roundRat) would take hours for a number beyond the bound.
	return connector.ExactNumber(s)
}

// decimalSum accumulates amounts exactly.
type decimalSum struct{ r big.Rat }

// add adds v (see decimalText) and reports whether v was a number.
func (s *decimalSum) add(v any) bool {
	r, ok := decimalText(v)
	if !ok {
		return false
	}
	s.r.Add(&s.r, r)
	return true
}

// addRat adds an exact value.
func (s *decimalSum) addRat(r *big.Rat) { s.r.Add(&s.r, r) }

// rat returns the running total.
func (s *decimalSum) rat() *big.Rat { return new(big.Rat).Set(&s.r) }

// number returns the total as a JSON number.
func (s *decimalSum) number() json.Number { return decimalNumber(&s.r) }

// sign is -1, 0 or +1.
func (s *decimalSum) sign() int { return s.r.Sign() }

// decimalNumber renders r as a plain JSON number: exact when r has a
// terminating decimal expansion (every sum of decimal texts has), otherwise
// rounded half away from zero to nine places, Frappe's column precision.
// Trailing zeros are dropped ("1180.5", "0", "-12").
func decimalNumber(r *big.Rat) json.Number {
	places := terminatingPlaces(r)
	if places < 0 || places > 18 {
		places = columnPlaces
	}
	s := roundRat(r, places)
	return json.Number(trimDecimal(s))
}

// terminatingPlaces returns how many decimal places r needs exactly, or -1
// when its expansion does not terminate.
func terminatingPlaces(r *big.Rat) int {
	d := new(big.Int).Set(r.Denom())
	two, five := big.NewInt(2), big.NewInt(5)
	twos, fives := 0, 0
	m := new(big.Int)
	for {
		q, rem := new(big.Int).QuoRem(d, two, m)
		if rem.Sign() != 0 {
			break
		}
		d, twos = q, twos+1
	}
	for {
		q, rem := new(big.Int).QuoRem(d, five, m)
		if rem.Sign() != 0 {
			break
		}
		d, fives = q, fives+1
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return -1
	}
	return max(twos, fives)
}

// roundRat formats r with exactly places decimals, rounding half away from
// zero.
func roundRat(r *big.Rat, places int) string { return roundRatTies(r, places, false) }

// roundRatTies formats r with exactly places decimals, rounding a tie
// away from zero, or to the even digit when toEven (banker's rounding).
func roundRatTies(r *big.Rat, places int, toEven bool) string {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	den := r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	switch c := new(big.Int).Mul(rem, big.NewInt(2)).Cmp(den); {
	case c > 0, c == 0 && (!toEven || q.Bit(0) == 1):
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if places > 0 {
		if len(digits) <= places {
			digits = strings.Repeat("0", places-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-places] + "." + digits[len(digits)-places:]
	}
	if neg && q.Sign() != 0 {
		digits = "-" + digits
	}
	return digits
}

// trimDecimal drops trailing fractional zeros and a bare point.
func trimDecimal(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// floatDigits is DBL_DIG: every decimal with at most this many significant
// digits survives a round trip through float64 unchanged.
const floatDigits = 15

// columnPlaces is the scale of Frappe's decimal(21,9) Currency and Float
// columns: no stored amount, and no sum or difference of them, has more
// decimal places.
const columnPlaces = 9

// withoutFloatNoise removes binary floating-point noise from a number a
// report computed as a Python float (a running balance, a total). Its text
// is rounded half away from zero at the 15th significant digit or the 9th
// decimal place, whichever is coarser, and rendered as a plain decimal:
// 4316.700000000001 becomes 4316.7 and, where amounts cancelled out and the
// noise reached the 13th digit, -1787.8599999999933 becomes -1787.86. No
// currency precision is assumed. Numbers with no digit beyond that point are
// returned as they came, as are integers (Python ints are exact, and their
// text has no point or exponent) and anything that is not a number.
func withoutFloatNoise(n json.Number) json.Number {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		return n
	}
	r, ok := parseDecimal(s)
	if !ok || r.Sign() == 0 {
		return n
	}
	places := min(columnPlaces, floatDigits-intDigits(r))
	// In units of the last place kept: nothing to do when that is whole.
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(places))), nil))
	units := new(big.Rat).Mul(r, scale)
	if places < 0 {
		units.Quo(r, scale)
	}
	if units.IsInt() {
		return n
	}
	if places >= 0 {
		return json.Number(trimDecimal(roundRat(r, places)))
	}
	// Past the 15th digit of a number of more than 15 whole digits.
	return json.Number(roundRat(units, 0) + strings.Repeat("0", -places))
}

func abs(n int) int { return max(n, -n) }

// intDigits is the place of r's first significant digit: the number of its
// whole digits when |r| >= 1, otherwise minus the zeros after the point
// (0.00123: -2). r is not zero.
func intDigits(r *big.Rat) int {
	a := new(big.Rat).Abs(r)
	if whole := new(big.Int).Quo(a.Num(), a.Denom()); whole.Sign() > 0 {
		return len(whole.String())
	}
	n, ten, one := 0, big.NewRat(10, 1), big.NewRat(1, 1)
	for a.Mul(a, ten).Cmp(one) < 0 {
		n--
	}
	return n
}

// canonicalNumber re-renders a number Frappe sent (possibly in exponent
// form) as a plain decimal JSON number, exactly. Values that are not numbers
// are returned unchanged.
func canonicalNumber(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	r, ok := parseDecimal(n.String())
	if !ok {
		return v
	}
	return decimalNumber(r)
}

// compareDecimal compares two amounts; values that are not numbers sort as
// zero.
func compareDecimal(a, b any) int {
	ra, ok := decimalText(a)
	if !ok {
		ra = new(big.Rat)
	}
	rb, ok := decimalText(b)
	if !ok {
		rb = new(big.Rat)
	}
	return ra.Cmp(rb)
}

// isPositive reports whether v is a number greater than zero.
func isPositive(v any) bool {
	r, ok := decimalText(v)
	return ok && r.Sign() > 0
}

// exactNumber returns v as a plain, exact JSON number; null and "" are 0.
// ok is false when v is not a number.
func exactNumber(v any) (json.Number, bool) {
	r, ok := decimalText(v)
	if !ok {
		return "", false
	}
	return decimalNumber(r), true
}
