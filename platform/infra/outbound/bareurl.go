package outbound

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// BareURLs returns err with a text that names every URL an *url.Error in
// it holds by its scheme, host and path only: never its user info, query
// or fragment. An *http.Client's error names the request's URL, query
// included (an inquiry's $filter, an authorization request's state), and
// for a redirect it refused the ERP's Location as the ERP wrote it, which
// may carry a password, a token or a session id. The result unwraps to
// err, so errors.Is and errors.As see what they saw; an err without an
// *url.Error (and nil) is returned as it is. Use it on an error of the
// outbound transport before it is logged or kept.
func BareURLs(err error) error {
	if err == nil {
		return nil
	}
	var bare *bareURLError
	if errors.As(err, &bare) {
		return err
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &bareURLError{err: err}
}

// bareURLError is BareURLs' error.
type bareURLError struct{ err error }

func (e *bareURLError) Error() string { return bareText(e.err) }
func (e *bareURLError) Unwrap() error { return e.err }

// bareText is err's text with the URL of each *url.Error in its tree
// replaced by BareURL's form of it.
func bareText(err error) string {
	text := err.Error()
	walkErrors(err, func(e error) {
		ue, ok := e.(*url.Error) //nolint:errorlint // walkErrors visits each error of the tree itself
		if !ok || ue.URL == "" {
			return
		}
		bare := BareURL(ue.URL)
		text = strings.ReplaceAll(text, strconv.Quote(ue.URL), strconv.Quote(bare))
		if len(ue.URL) >= 8 {
			// Unquoted, as a layer above may have printed it; a short
			// one would match other words.
			text = strings.ReplaceAll(text, ue.URL, bare)
		}
	})
	return text
}

// walkErrors calls visit on err and every error it wraps, depth first.
func walkErrors(err error, visit func(error)) {
	for depth := 0; err != nil && depth < 64; depth++ {
		visit(err)
		switch u := err.(type) { //nolint:errorlint // this is the walk of the tree that errors.As would do
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walkErrors(e, visit)
			}
			return
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return
		}
	}
}

// BareURL is raw's scheme, host and path (scheme://host/path), without
// user info, query or fragment; a relative reference keeps its path only.
// Text that does not parse as a URL is not repeated.
func BareURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an address erpgate could not read)"
	}
	if u.Opaque != "" {
		return u.Scheme + ":"
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + ":")
	}
	if u.Host != "" || u.Scheme != "" {
		b.WriteString("//" + u.Host)
	}
	b.WriteString(u.EscapedPath())
	return b.String()
}
