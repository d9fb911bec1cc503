package sites

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// maxSlugLength is the longest slug, as the sites_slug_check constraint
// of the schema has it.
const maxSlugLength = 48

// reservedSlugs would read as erpgate's own paths or be confused with them
// in URLs, logs and the console.
var reservedSlugs = map[string]bool{
	"admin": true, "api": true, "auth": true, "docs": true, "mcp": true,
	"metrics": true, "oauth": true, "service": true, "sites": true,
	"static": true, "well-known": true,
}

// maxHostLabelLength is the longest DNS label.
const maxHostLabelLength = 63

// ldhLabel reports whether s is 1 to maxLen characters of a-z, 0-9 and
// "-", starting and ending with a letter or digit: a DNS label in lower
// case (the LDH rule), and with maxLen 48 a slug as the sites_slug_check
// constraint of the schema has it. A loop, not a regular expression: the
// slug of every OAuth MCP request is checked.
func ldhLabel(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

const (
	maxDisplayNameRunes = 200
	maxTokenNameRunes   = 100
	maxHostLength       = 253
)

// ValidateSlug checks that slug can name a site: 1 to 48 characters of a-z,
// 0-9 and "-", starting and ending with a letter or digit, not reserved and
// not shaped like a UUID (the admin API accepts either in the same place).
// The error is a *ValidationError.
func ValidateSlug(slug string) error {
	switch {
	case !ldhLabel(slug, maxSlugLength):
		return fieldInvalidf("slug", "must be 1 to 48 of a-z, 0-9 and -, starting and ending with a letter or digit",
			"slug %s is not valid: use 1 to 48 characters of a-z, 0-9 and \"-\", starting and ending with a letter or digit", toolerr.Quote(slug))
	case reservedSlugs[slug]:
		return fieldInvalidf("slug", "is one erpgate keeps for itself; choose another", "slug %s is reserved; choose another", toolerr.Quote(slug))
	}
	if _, err := uuid.Parse(slug); err == nil {
		return fieldInvalidf("slug", "looks like a site id; choose another",
			"slug %s looks like a UUID, which would be ambiguous with site ids; choose another", toolerr.Quote(slug))
	}
	return nil
}

// ValidateDisplayName checks a site's display name: not blank, at most 200
// characters, no control characters, direction marks or line separators.
// The error is a *ValidationError.
func ValidateDisplayName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fieldInvalidf("display_name", "is empty", "display name must not be blank")
	}
	return checkText("display_name", "display name", name, maxDisplayNameRunes)
}

// ValidateTokenName checks a service token's optional name: at most 100
// characters, no control characters, direction marks or line separators.
// The error is a *ValidationError.
func ValidateTokenName(name string) error {
	return checkText("token_name", "token name", name, maxTokenNameRunes)
}

func checkText(field, what, s string, maxRunes int) error {
	if !utf8.ValidString(s) {
		return fieldInvalidf(field, "is not valid text", "%s must be valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return fieldInvalidf(field, fmt.Sprintf("is longer than %d characters", maxRunes), "%s must be at most %d characters, got %d", what, maxRunes, n)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return fieldInvalidf(field, "holds a control character", "%s must not contain control characters", what)
	}
	if strings.IndexFunc(s, reorders) >= 0 {
		return invalidf("%s must not contain invisible direction marks or line separators", what)
	}
	return nil
}

// reorders reports whether r changes how the text around it is laid out
// without showing itself: a bidirectional control (U+202E and its kin),
// which can make one name read as another, or a line or paragraph
// separator, which breaks a line as a newline does.
func reorders(r rune) bool {
	return unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// ShownBaseURL is an address a person typed as an error message, an
// audit event or a log line may repeat it: without a user name and
// password, query or fragment, where a secret may have been pasted along.
// It is "" when nothing of it can safely be shown (user:password@host
// without a scheme reads as a scheme and an opaque part).
func ShownBaseURL(raw string) string {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		if strings.ContainsAny(raw, "@?#") {
			return ""
		}
		return raw
	}
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return shown.String()
}

// quoteBaseURL names raw in a validation message: quoted as ShownBaseURL
// shows it, or not at all.
func quoteBaseURL(raw string) string {
	if shown := ShownBaseURL(raw); shown != "" {
		return "base URL " + toolerr.Quote(shown)
	}
	return "the base URL"
}

// NormalizeBaseURL turns an operator-entered ERP address into the origin
// erpgate stores and matches against: scheme://host[:port], lower case, with
// the scheme's default port dropped.
//
// It refuses anything that is not an absolute http(s) URL, user names or
// passwords, queries, fragments and paths other than "/" (a site of a
// connector that does not accept a path is an origin). Plain http is
// accepted only for loopback hosts and hosts isDevHost accepts (isDevHost
// may be nil). The error is a *ValidationError.
func NormalizeBaseURL(raw string, isDevHost func(host string) bool) (string, error) {
	return normalizeBaseURL(raw, isDevHost, false)
}

// NormalizeBaseURLPath is NormalizeBaseURL for a connector whose sites may
// live under a virtual directory (https://erp.example.com/AcumaticaERP/):
// the path is kept, without trailing slashes. Each segment is 1 to 100
// letters, digits, "-", "_", "." or "~", and neither "." nor "..", so the
// path has one spelling and the outbound transport's prefix check means
// what it says; the whole path is at most 200 characters.
func NormalizeBaseURLPath(raw string, isDevHost func(host string) bool) (string, error) {
	return normalizeBaseURL(raw, isDevHost, true)
}

// pathSegmentPattern matches one segment of a base URL's path.
var pathSegmentPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,100}$`)

const maxBasePathLength = 200

// normalizeBasePath returns the canonical form of a base URL's path: "" for
// the web root, else "/seg/seg" with trailing slashes dropped.
func normalizeBasePath(raw string, u *url.URL) (string, error) {
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return "", nil
	}
	if len(p) > maxBasePathLength {
		return "", baseURLInvalidf(fmt.Sprintf("has a path longer than %d characters", maxBasePathLength), "base URL path must be at most %d characters", maxBasePathLength)
	}
	for _, seg := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if seg == "." || seg == ".." || !pathSegmentPattern.MatchString(seg) {
			return "", baseURLInvalidf("has a path erpgate cannot use: write it like /AcumaticaERP, with letters, digits, -, _, . and ~ between single slashes",
				"%s has a path erpgate cannot use: write it like /AcumaticaERP, with letters, digits, \"-\", \"_\", \".\" and \"~\" between single slashes, and no \".\" or \"..\" parts", quoteBaseURL(raw))
		}
	}
	return p, nil
}

// baseURLInvalidf is a refusal of a base URL, problem as
// ValidationError.Problem has it.
func baseURLInvalidf(problem, format string, args ...any) error {
	return fieldInvalidf("base_url", problem, format, args...)
}

func normalizeBaseURL(raw string, isDevHost func(host string) bool, allowPath bool) (string, error) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", baseURLInvalidf("is empty", "base URL must not be blank")
	case !utf8.ValidString(raw):
		return "", baseURLInvalidf("is not valid text", "base URL must be valid UTF-8")
	case strings.IndexFunc(raw, unicode.IsControl) >= 0:
		return "", baseURLInvalidf("holds a control character", "base URL must not contain control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", baseURLInvalidf("is not a web address, like https://erp.example.com", "%s is not a valid URL", quoteBaseURL(raw))
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", baseURLInvalidf("must start with https://, like https://erp.example.com", "%s must start with https:// (or http:// for a development host)", quoteBaseURL(raw))
	case u.Opaque != "" || u.Host == "":
		return "", baseURLInvalidf("must name a host, like https://erp.example.com", "%s must be absolute, like https://erp.example.com", quoteBaseURL(raw))
	case u.User != nil:
		return "", baseURLInvalidf("must not hold a user name or password", "base URL must not contain a user name or password")
	case u.RawQuery != "" || u.ForceQuery:
		return "", baseURLInvalidf("must not have a query (a ? and what follows it)", "%s must not have a query", quoteBaseURL(raw))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", baseURLInvalidf("must not have a fragment (a # and what follows it)", "%s must not have a fragment", quoteBaseURL(raw))
	case !allowPath && u.Path != "" && u.Path != "/":
		return "", baseURLInvalidf("must be the site's address without a path, like https://erp.example.com",
			"%s must be the site's origin, without a path (got %s)", quoteBaseURL(raw), toolerr.Quote(u.Path))
	}
	basePath, err := normalizeBasePath(raw, u)
	if err != nil {
		return "", err
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", baseURLInvalidf("has a port that is not valid", "%s has an invalid port", quoteBaseURL(raw))
		}
		port = strconv.Itoa(n)
		if (scheme == "https" && n == 443) || (scheme == "http" && n == 80) {
			port = ""
		}
	}
	if scheme == "http" && !isLoopbackHost(host) && (isDevHost == nil || !isDevHost(host)) {
		return "", baseURLInvalidf("must start with https://; http:// is only for this machine and configured development hosts",
			"%s must use https; plain http is allowed only for loopback and configured development hosts", quoteBaseURL(raw))
	}
	hostport := host
	switch {
	case port != "":
		hostport = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		hostport = "[" + host + "]"
	}
	return scheme + "://" + hostport + basePath, nil
}

// normalizeHost lower-cases host and checks it is a DNS name in LDH form or
// an IP literal. Internationalised names must be given in punycode, so the
// stored origin has exactly one spelling.
func normalizeHost(host string) (string, error) {
	host = strings.ToLower(host)
	if host == "" {
		return "", baseURLInvalidf("must name a host, like https://erp.example.com", "base URL must name a host")
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), nil
	}
	if strings.Contains(host, "%") || strings.Contains(host, ":") {
		return "", baseURLInvalidf("has a host that is not a valid IP address", "base URL host %s is not a valid IP address", toolerr.Quote(host))
	}
	if len(host) > maxHostLength {
		return "", baseURLInvalidf(fmt.Sprintf("has a host name longer than %d characters", maxHostLength), "base URL host is longer than %d characters", maxHostLength)
	}
	for _, label := range strings.Split(host, ".") {
		if !ldhLabel(label, maxHostLabelLength) {
			return "", baseURLInvalidf("has a host name that is not valid: use letters, digits, - and dots, and write international names in their xn-- form",
				"base URL host %s is not a valid host name (use letters, digits, \"-\" and dots; write international names in their xn-- form)", toolerr.Quote(host))
		}
	}
	return host, nil
}

// isLoopbackHost reports whether host always means this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkBaseURL verifies that s is already in NormalizeBaseURLPath's output
// form (the shape Site.Connector relies on): an origin, with at most a
// normalised path. It does not apply the https rule, which needs the
// deployment's development hosts and belongs to callers, nor whether the
// site's connector accepts a path.
func checkBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, invalidf("base URL %q is not an origin (scheme://host[:port]) with an optional path", s)
	}
	if p, err := normalizeBasePath(s, u); err != nil || p != u.EscapedPath() {
		return nil, invalidf("base URL %q does not have a normalised path", s)
	}
	return u, nil
}
