package frappetest

import (
	"math/big"
	"strconv"
	"strings"
)

// SQL value semantics used by filters, ORDER BY and aggregates. Values are
// nil (NULL), string, int64, Decimal or float64.

func isNumber(v any) bool {
	switch v.(type) {
	case int64, Decimal, float64:
		return true
	}
	return false
}

// toRat converts a value to a number as MariaDB does in numeric context:
// strings use their longest numeric prefix ("12abc" -> 12, "abc" -> 0).
func toRat(v any) *big.Rat {
	switch x := v.(type) {
	case int64:
		return new(big.Rat).SetInt64(x)
	case Decimal:
		return x.Rat()
	case float64:
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
		if ok {
			return r
		}
	case string:
		return numericPrefix(x)
	}
	return new(big.Rat)
}

func numericPrefix(s string) *big.Rat {
	s = strings.TrimLeft(s, " \t\n")
	end := 0
	seenDigit, seenDot := false, false
	for end < len(s) {
		c := s[end]
		switch {
		case c >= '0' && c <= '9':
			seenDigit = true
		case c == '.' && !seenDot:
			seenDot = true
		case (c == '-' || c == '+') && end == 0:
		default:
			goto done
		}
		end++
	}
done:
	if !seenDigit {
		return new(big.Rat)
	}
	r, ok := new(big.Rat).SetString(strings.TrimSuffix(s[:end], "."))
	if !ok {
		return new(big.Rat)
	}
	return r
}

// sqlCompare compares two non-NULL values: numerically if either side is a
// number, otherwise under the collation.
func sqlCompare(a, b any) int {
	if isNumber(a) || isNumber(b) {
		return toRat(a).Cmp(toRat(b))
	}
	return collateCompare(toText(a), toText(b))
}

// orderCompare compares for ORDER BY / GROUP BY: NULL sorts first.
func orderCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return sqlCompare(a, b)
}

// toText renders a value as MariaDB would cast it to a string.
func toText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case Decimal:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// groupKey returns a key under which equal values (per the collation) are
// grouped or de-duplicated.
func groupKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x00null"
	case string:
		return "s" + collationKey(x)
	default:
		return "n" + toRat(x).RatString()
	}
}

// jsonValue converts an internal value for JSON output.
func jsonValue(v any) any {
	switch x := v.(type) {
	case *big.Rat:
		f, _ := x.Float64()
		return f
	}
	return v
}

// normDatetime pads a datetime string to microseconds for comparison.
func normDatetime(s string) string {
	if len(s) == 10 {
		return s + " 00:00:00.000000"
	}
	if len(s) == 19 {
		return s + ".000000"
	}
	return s
}

// timeMicros parses "H:MM:SS[.ffffff]" into microseconds.
func timeMicros(s string) (int64, bool) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, false
	}
	var us int64
	if len(parts) == 3 {
		sec, frac, _ := strings.Cut(parts[2], ".")
		sv, err := strconv.Atoi(sec)
		if err != nil {
			return 0, false
		}
		frac = (frac + "000000")[:6]
		fv, _ := strconv.Atoi(frac)
		us = int64(sv)*1e6 + int64(fv)
	}
	return int64(h)*3600e6 + int64(m)*60e6 + us, true
}
