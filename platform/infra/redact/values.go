package redact

import (
	"strings"
)

// Value shapes. A whole string value is redacted when it is an SSN written
// with dashes (078-05-1120) or a payment-card number (13–19 digits,
// optionally grouped by spaces or dashes, passing the Luhn check); an SSN
// without dashes, or with spaces, only under a field whose name suggests
// one (hintsSSN). Inside any text, and as a JSON number, an IBAN (its
// country's length and the ISO 13616 mod-97 check) and a card number (as
// above, starting with 2–6 as issued cards do, so that millisecond
// timestamps and long references are left alone) are replaced.

// looksSensitive reports whether a whole string value has the shape of a
// US social security number or a payment card number.
func looksSensitive(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 11 || len(s) > 23 {
		return false
	}
	if ssnDashed(s) {
		return true
	}
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c-'0')
		case c == ' ' || c == '-':
		default:
			return false
		}
	}
	return len(digits) >= 13 && len(digits) <= 19 && luhn(digits)
}

// ssnDashed reports s == ddd-dd-dddd.
func ssnDashed(s string) bool {
	if len(s) != 11 || s[3] != '-' || s[6] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i != 3 && i != 6 && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// ssnUndashed reports whether s is nine digits, whole or grouped 3-2-4 by
// spaces or dashes: an SSN when the field's name suggests one.
func ssnUndashed[T ~string | ~[]byte](s T) bool {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			n++
		case (c == ' ' || c == '-') && (n == 3 || n == 5) && i > 0 && isDigit(s[i-1]):
		default:
			return false
		}
	}
	return n == 9
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

func luhn(d []byte) bool {
	sum := 0
	for i := len(d) - 1; i >= 0; i-- {
		v := int(d[i])
		if (len(d)-1-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

// cardNumber reports whether digits (a JSON number's text) is a card
// number: 13–19 digits starting with 2–6, passing the Luhn check.
func cardNumber(text string) bool {
	if len(text) < 13 || len(text) > 19 || text[0] < '2' || text[0] > '6' {
		return false
	}
	var d [19]byte
	for i := 0; i < len(text); i++ {
		if !isDigit(text[i]) {
			return false
		}
		d[i] = text[i] - '0'
	}
	return luhn(d[:len(text)])
}

// mayHoldNumbers is the cheap precondition of redactEmbedded: both shapes
// it finds have at least 12 digits (the shortest IBAN, Norway's, has 13).
func mayHoldNumbers[T ~string | ~[]byte](s T) bool {
	if len(s) < 13 {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			n++
			if n >= 12 {
				return true
			}
		}
	}
	return false
}

// redactEmbedded returns s with every IBAN and card number in it replaced
// by the placeholder.
func redactEmbedded(s string) string {
	start, end := nextEmbedded(s, 0)
	if end == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for end > 0 {
		b.WriteString(s[last:start])
		b.WriteString(Placeholder)
		last = end
		start, end = nextEmbedded(s, end)
	}
	b.WriteString(s[last:])
	return b.String()
}

// hasEmbedded reports whether s holds an IBAN or a card number.
func hasEmbedded[T ~string | ~[]byte](s T) bool {
	_, end := nextEmbedded(s, 0)
	return end > 0
}

// nextEmbedded finds the first IBAN or card number in s at or after from,
// and returns where it starts and ends; end is 0 when there is none. A
// match must stand on its own: the characters around it are not letters
// or digits.
func nextEmbedded[T ~string | ~[]byte](s T, from int) (start, end int) {
	for i := from; i < len(s); i++ {
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		if c := s[i]; c >= 'A' && c <= 'Z' {
			end = ibanAt(s, i)
		} else if c >= '2' && c <= '6' {
			end = cardAt(s, i)
		}
		if end > 0 {
			return i, end
		}
	}
	return 0, 0
}

// cardAt returns the end of a card number starting at s[i] (digits,
// single spaces or dashes between them), or 0.
func cardAt[T ~string | ~[]byte](s T, i int) int {
	var d [19]byte
	n, j, end := 0, i, 0
	for j < len(s) {
		c := s[j]
		if isDigit(c) {
			if n == len(d) {
				return 0 // a longer number is not a card
			}
			d[n] = c - '0'
			n++
			j++
			end = j
			continue
		}
		if (c == ' ' || c == '-') && j+1 < len(s) && isDigit(s[j+1]) && n > 0 {
			j++
			continue
		}
		break
	}
	if n < 13 || (end < len(s) && isAlnum(s[end])) || !luhn(d[:n]) {
		return 0
	}
	return end
}

// ibanAt returns the end of an IBAN starting at s[i] (electronic form, or
// printed in groups separated by single spaces), or 0.
func ibanAt[T ~string | ~[]byte](s T, i int) int {
	if i+4 > len(s) || s[i+1] < 'A' || s[i+1] > 'Z' || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
		return 0
	}
	want := ibanLengths[uint16(s[i])<<8|uint16(s[i+1])]
	if want == 0 {
		return 0
	}
	var chars [34]byte
	n, j, end := 0, i, 0
	for j < len(s) && n < want {
		c := s[j]
		if c >= 'a' && c <= 'z' {
			return 0
		}
		if isAlnum(c) {
			chars[n] = c
			n++
			j++
			end = j
			continue
		}
		if c == ' ' && j+1 < len(s) && isAlnum(s[j+1]) {
			j++
			continue
		}
		break
	}
	if n != want || (end < len(s) && isAlnum(s[end])) || !ibanChecksum(chars[:n]) {
		return 0
	}
	return end
}

// ibanChecksum is ISO 13616's check: the first four characters moved to
// the end, letters as 10–35, the number mod 97 is 1.
func ibanChecksum(iban []byte) bool {
	rem := 0
	add := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
			return
		}
		rem = (rem*100 + int(c-'A') + 10) % 97
	}
	for _, c := range iban[4:] {
		add(c)
	}
	for _, c := range iban[:4] {
		add(c)
	}
	return rem == 1
}

// ibanLengths are the IBAN lengths of the SWIFT IBAN registry, by country
// code.
var ibanLengths = map[uint16]int{
	cc("AD"): 24, cc("AE"): 23, cc("AL"): 28, cc("AT"): 20, cc("AZ"): 28, cc("BA"): 20, cc("BE"): 16, cc("BG"): 22,
	cc("BH"): 22, cc("BI"): 27, cc("BR"): 29, cc("BY"): 28, cc("CH"): 21, cc("CR"): 22, cc("CY"): 28, cc("CZ"): 24,
	cc("DE"): 22, cc("DJ"): 27, cc("DK"): 18, cc("DO"): 28, cc("EE"): 20, cc("EG"): 29, cc("ES"): 24, cc("FI"): 18,
	cc("FK"): 18, cc("FO"): 18, cc("FR"): 27, cc("GB"): 22, cc("GE"): 22, cc("GI"): 23, cc("GL"): 18, cc("GR"): 27,
	cc("GT"): 28, cc("HR"): 21, cc("HU"): 28, cc("IE"): 22, cc("IL"): 23, cc("IQ"): 23, cc("IS"): 26, cc("IT"): 27,
	cc("JO"): 30, cc("KW"): 30, cc("KZ"): 20, cc("LB"): 28, cc("LC"): 32, cc("LI"): 21, cc("LT"): 20, cc("LU"): 20,
	cc("LV"): 21, cc("LY"): 25, cc("MC"): 27, cc("MD"): 24, cc("ME"): 22, cc("MK"): 19, cc("MN"): 20, cc("MR"): 27,
	cc("MT"): 31, cc("MU"): 30, cc("NI"): 28, cc("NL"): 18, cc("NO"): 15, cc("OM"): 23, cc("PK"): 24, cc("PL"): 28,
	cc("PS"): 29, cc("PT"): 25, cc("QA"): 29, cc("RO"): 24, cc("RS"): 22, cc("RU"): 33, cc("SA"): 24, cc("SC"): 31,
	cc("SD"): 18, cc("SE"): 24, cc("SI"): 19, cc("SK"): 24, cc("SM"): 27, cc("SO"): 23, cc("ST"): 25, cc("SV"): 28,
	cc("TL"): 23, cc("TN"): 24, cc("TR"): 26, cc("UA"): 29, cc("VA"): 22, cc("VG"): 24, cc("XK"): 20, cc("YE"): 30,
}

// cc is a country code as ibanLengths keys it.
func cc(code string) uint16 { return uint16(code[0])<<8 | uint16(code[1]) }
