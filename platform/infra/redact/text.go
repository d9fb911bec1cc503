package redact

import (
	"regexp"
	"strings"
	"unicode"
)

// Error text. An ERP's error message (Frappe's HTTP 417 and
// _server_messages, an exception's text) is written for the ERP's own
// users and logs: it can quote other records' values, the SQL that failed,
// a traceback or a URL with credentials. RedactText makes such text fit
// for a model: it withholds SQL and tracebacks, removes credentials from
// URLs and authorisation headers, and redacts sensitive values by shape
// and by the name before them ("Tax ID: 12-3456789").

// WithheldDatabaseError replaces a message that quotes SQL or a database
// driver's error.
const WithheldDatabaseError = "the ERP reported a database error; its text is withheld because it can contain other records' data (the ERP's error log has it)"

var (
	// sqlText matches SQL statements and database drivers' errors, never
	// English such as "Please select a company from the list".
	sqlText = regexp.MustCompile("(?i)\\bselect\\s+(?:\\*|distinct\\b|count\\s*\\(|sum\\s*\\(|`)|\\bfrom\\s+`?tab[A-Z]|`tab[A-Z]|\\binsert\\s+into\\b|\\bdelete\\s+from\\b|\\bupdate\\s+`?\\w+`?\\s+set\\s+`?\\w+`?\\s*=|\\bwhere\\s+`?\\w+`?\\s*(?:=|like\\b|in\\s*\\()|pymysql|mysqldb|mariadb|psycopg|sql syntax|duplicate entry|OperationalError|ProgrammingError|IntegrityError|DataError\\(")
	// traceback is where a Python traceback starts.
	traceback = regexp.MustCompile(`(?s)Traceback \(most recent call last\).*|(?m)^\s*File "[^"]+", line \d+.*$`)
	// urlCredentials is the user and password part of a URL.
	urlCredentials = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@`)
	// authHeader is a credential after its scheme: "token key:secret",
	// "Bearer eyJ…", "Basic dXNlcjpw…".
	authHeader = regexp.MustCompile(`(?i)\b(token|bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}(?::[A-Za-z0-9._~+/=-]+)?`)
	// ssnInText is an SSN written with dashes, or after a word that
	// names one.
	ssnInText = regexp.MustCompile(`(?i)\b\d{3}-\d{2}-\d{4}\b|\b(?:ssn|ss#|sin|social security(?: number| no\.?)?)\W{0,3}\d{3}[ -]?\d{2}[ -]?\d{4}\b`)
	// nameSeparator is what stands between a name and its value.
	nameSeparator = regexp.MustCompile(`\s*(?::|=|\bis\b)\s*`)
	// valueToken is the value after a separator.
	valueToken = regexp.MustCompile(`^(?:'[^']*'|"[^"]*"|[^\s,;]+)`)
	// nameBefore is the name before a separator: up to four words, or
	// one in quotes, as JSON or a Python dict in a message has it.
	nameBefore = regexp.MustCompile(`(?:(?:[A-Za-z][A-Za-z0-9_]*[ ]?){1,4}|"[A-Za-z][A-Za-z0-9_ ]*"|'[A-Za-z][A-Za-z0-9_ ]*')$`)
)

// RedactText returns s fit for a model, and whether it changed.
func (r *Redactor) RedactText(s string) (string, bool) {
	if s == "" {
		return s, false
	}
	if sqlText.MatchString(s) {
		return WithheldDatabaseError, true
	}
	out := traceback.ReplaceAllString(s, "")
	out = urlCredentials.ReplaceAllString(out, "${1}"+Placeholder+"@")
	out = authHeader.ReplaceAllStringFunc(out, func(m string) string {
		// A credential has digits; "token verification" is English.
		i := strings.IndexFunc(m, unicode.IsSpace)
		if i < 0 || !strings.ContainsAny(m[i:], "0123456789") {
			return m
		}
		return m[:i] + " " + Placeholder
	})
	out = ssnInText.ReplaceAllStringFunc(out, func(m string) string {
		// Keep the word that named it.
		if i := strings.IndexFunc(m, isDigitRune); i > 0 {
			return m[:i] + Placeholder
		}
		return Placeholder
	})
	if mayHoldNumbers(out) {
		out = redactEmbedded(out)
	}
	out = r.redactNamedValues(out)
	out = strings.TrimSpace(out)
	if out == "" {
		out = "the ERP reported an internal error; its details are withheld"
	}
	return out, out != s
}

// redactNamedValues redacts each value written after a sensitive name
// and ":", "=" or "is".
func (r *Redactor) redactNamedValues(s string) string {
	var b strings.Builder
	last := 0
	for _, sep := range nameSeparator.FindAllStringIndex(s, -1) {
		if sep[0] < last {
			continue
		}
		name := nameBefore.FindString(s[last:sep[0]])
		value := valueToken.FindString(s[sep[1]:])
		if name == "" || value == "" || value == Placeholder || !r.sensitiveWords(Words(strings.Trim(name, `"'`))) {
			continue
		}
		if strings.TrimSpace(s[sep[0]:sep[1]]) == "is" && stateWords[strings.ToLower(value)] {
			// "API key is missing": English about the value, not the value.
			continue
		}
		b.WriteString(s[last:sep[1]])
		b.WriteString(Placeholder)
		last = sep[1] + len(value)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// stateWords are the words after "is" that say what state a named value
// is in, in the ERPs' messages ("Password is required", "API key is
// missing", "token is not valid"): a sentence about the value, which does
// not contain it. After ":" or "=" the same words are redacted, since there
// they stand where a value is written.
var stateWords = map[string]bool{
	"missing": true, "required": true, "mandatory": true, "invalid": true, "incorrect": true,
	"wrong": true, "expired": true, "empty": true, "blank": true, "not": true, "too": true,
	"disabled": true, "revoked": true, "unknown": true, "a": true, "an": true, "the": true,
	"already": true, "no": true, "set": true, "valid": true, "correct": true, "locked": true,
}

func isDigitRune(c rune) bool { return c >= '0' && c <= '9' }
