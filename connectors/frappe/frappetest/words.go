package frappetest

// moneyInWords renders an amount like frappe.utils.money_in_words, e.g.
// "NZD One Thousand, One Hundred And Eighty and Fifty Cent only.".
func moneyInWords(cents int64, currency string) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	main, frac := cents/100, cents%100
	var out string
	switch {
	case main == 0 && frac == 0:
		out = currency + " Zero"
	case main == 0:
		out = titleWords(numberWords(frac)) + " Cent"
	default:
		out = currency + " " + titleWords(numberWords(main))
		if frac != 0 {
			out += " and " + titleWords(numberWords(frac)) + " Cent"
		}
	}
	if neg {
		out = "Minus " + out
	}
	return out + " only."
}

var smallWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
var tensWords = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

// numberWords spells n in British English like num2words(lang="en"):
// "one thousand, one hundred and eighty"; hyphens become spaces as in
// frappe.utils.in_words.
func numberWords(n int64) string {
	if n < 20 {
		return smallWords[n]
	}
	if n < 100 {
		s := tensWords[n/10]
		if n%10 != 0 {
			s += " " + smallWords[n%10]
		}
		return s
	}
	if n < 1000 {
		s := smallWords[n/100] + " hundred"
		if n%100 != 0 {
			s += " and " + numberWords(n%100)
		}
		return s
	}
	for _, sc := range []struct {
		v    int64
		name string
	}{{1_000_000_000, "billion"}, {1_000_000, "million"}, {1000, "thousand"}} {
		if n >= sc.v {
			s := numberWords(n/sc.v) + " " + sc.name
			rest := n % sc.v
			switch {
			case rest == 0:
			case rest < 100:
				s += " and " + numberWords(rest)
			default:
				s += ", " + numberWords(rest)
			}
			return s
		}
	}
	return ""
}

// titleWords upper-cases the first letter of every word (Python str.title
// for ASCII words).
func titleWords(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		if c >= 'a' && c <= 'z' && start {
			b[i] = c - 'a' + 'A'
		}
		start = c == ' ' || c == ','
	}
	return string(b)
}
