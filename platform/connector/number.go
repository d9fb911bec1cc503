package connector

import (
	"math/big"
	"strconv"
	"strings"
)

// MaxNumberBits bounds the numerator and denominator of a number read
// exactly. An amount or a quantity needs a few hundred bits at most (a
// float64's exact value some 1,100); a ten-byte literal such as
// 1e-1000000 would cost tens of milliseconds to read, and seconds in the
// loops over its digits that follow.
const MaxNumberBits = 4096

// ExactNumber reads a decimal literal (s as big.Rat.SetString takes it)
// exactly, or reports false when it is not one or its value needs more
// than MaxNumberBits. An exponent beyond the bound is refused before
// big.Rat spends time building its power of ten.
func ExactNumber(s string) (*big.Rat, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp > MaxNumberBits || exp < -MaxNumberBits {
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Num().BitLen() > MaxNumberBits || r.Denom().BitLen() > MaxNumberBits {
		return nil, false
	}
	return r, true
}
