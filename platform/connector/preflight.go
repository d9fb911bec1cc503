package connector

import (
	"context"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Preflighter is implemented by a connector with preflight checks of its
// own (issue 17): what only it knows how to ask its ERP, such as
// Acumatica's endpoint version and canary inquiry, or Frappe's version and
// the OAuth client's settings. The platform runs the checks every site has
// (DNS and TLS, the API credential) and then these, and stores the result
// (platform/front/siteadmin).
//
// Every client in the input comes from the outbound transport: it reaches
// only the site's own address. A check never returns a token, a secret or
// an ERP body in its words.
type Preflighter interface {
	Preflight(ctx context.Context, site Site, in PreflightInput) []PreflightCheck
}

// PreflightInput is what a connector's checks may use.
type PreflightInput struct {
	// HTTP reaches the site without credentials (discovery documents,
	// authorize endpoints). Redirects are followed only within the site.
	HTTP *http.Client
	// API is authorised with the site's API credential; nil when the site
	// has none, or it was refused (the platform's own check says so).
	API *http.Client
	// OAuthClient is the site's OAuth client on the ERP; nil when the site
	// has no oauth connection.
	OAuthClient *OAuthClient
	// RedirectURI is erpgate's OAuth callback, which the ERP's OAuth
	// client must accept.
	RedirectURI string
	// SharedRedirectURI is the callback every site shared before sites had
	// their own, set for a site with its own: its ERP's OAuth client must
	// no longer accept it, or a site still on it can be sent that ERP's
	// codes for the site's people.
	SharedRedirectURI string
}

// CheckStatus is a preflight check's outcome.
type CheckStatus string

// The outcomes of a check.
const (
	// CheckPass: the check found what the site needs.
	CheckPass CheckStatus = "pass"
	// CheckFail: something must be fixed; Fix says how.
	CheckFail CheckStatus = "fail"
	// CheckSkip: the check does not apply (no OAuth client, no API
	// credential), or could not run because an earlier check failed;
	// Found says which.
	CheckSkip CheckStatus = "skip"
)

// PreflightCheck is one check's answer.
type PreflightCheck struct {
	// ID is stable, lower-case and dotted ("dns", "acumatica.canary_inquiry").
	ID string `json:"id"`
	// Title says what is checked, for an operator ("The canary inquiry is readable").
	Title  string      `json:"title"`
	Status CheckStatus `json:"status"`
	// Found says what the check saw, in plain words.
	Found string `json:"found"`
	// Fix says how to fix a failed check; empty otherwise.
	Fix string `json:"fix,omitempty"`
}

// Pass, Fail and Skip build checks.
func Pass(id, title, found string) PreflightCheck {
	return PreflightCheck{ID: id, Title: title, Status: CheckPass, Found: found}
}

// Fail is a failed check with what was found and how to fix it.
func Fail(id, title, found, fix string) PreflightCheck {
	return PreflightCheck{ID: id, Title: title, Status: CheckFail, Found: found, Fix: fix}
}

// Skip is a check that does not apply, with why.
func Skip(id, title, why string) PreflightCheck {
	return PreflightCheck{ID: id, Title: title, Status: CheckSkip, Found: why}
}

// PreflightChallenge is a well-formed PKCE S256 challenge for an
// authorization request a check sends and never completes.
const PreflightChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

// maxPreflightBody bounds what a check reads of an answer.
const maxPreflightBody = 1 << 20

// PreflightGet reads target with hc without following redirects (a
// check reads a redirect, it never goes there) and returns the answer
// with at most 1 MiB of its body, read and closed.
func PreflightGet(ctx context.Context, hc *http.Client, target string) (*http.Response, []byte, error) {
	nc := *hc
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := nc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPreflightBody))
	return resp, body, err
}

// ERPWord keeps a word from an ERP's answer (a version, an error code)
// printable and at most 40 bytes, for a check's Found text.
func ERPWord(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 40 {
		s = CutText(s, 40) + "…"
	}
	if s == "" {
		return "empty"
	}
	return s
}

// PreflightAuthorize sends, with hc, an authorization request of oauth's
// for client with redirectURI and reads the answer without following it:
// whether the ERP accepts the client and the redirect URI shows there. The
// request carries a fixed state and challenge and is never completed.
func PreflightAuthorize(ctx context.Context, oauth UpstreamOAuth, site Site, hc *http.Client, client OAuthClient, redirectURI string) (*http.Response, []byte, error) {
	target, err := oauth.AuthorizationURL(site, client, AuthorizationRequest{
		RedirectURI: redirectURI, State: "erpgate-preflight", CodeChallenge: PreflightChallenge})
	if err != nil {
		return nil, nil, err
	}
	return PreflightGet(ctx, hc, target)
}

// CutText is s cut to at most n bytes, at a character boundary, so that
// a shortened message stays UTF-8.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
