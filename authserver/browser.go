package authserver

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/web/pagekit"
)

// The browser-binding cookie ties a sign-in flow to the browser that
// started it. It is a pagekit cookie: __Host-erpgate_signin over https,
// erpgate_signin over plain http in development, HttpOnly and
// SameSite=Lax (the user comes back from the ERP by a cross-site
// top-level redirect, which must carry it).
const browserCookie = "erpgate_signin"

// browserID returns the browser-binding value, if the request carries one.
func (s *Server) browserID(r *http.Request) (string, bool) { return s.kit.Binding(r, browserCookie) }

// ensureBrowserID returns the request's binding value, or sets a new one.
// The cookie lives as long as a sign-in may take.
func (s *Server) ensureBrowserID(w http.ResponseWriter, r *http.Request) (string, error) {
	return s.kit.EnsureBinding(w, r, browserCookie, s.deps.SignInTimeout), nil
}

// csrfToken is the token every form of a flow carries: pagekit's HMAC of
// the flow id keyed by the browser-binding cookie.
func csrfToken(browser, flowID string) string { return pagekit.CSRFToken(browser, flowID) }

// checkCSRF reports whether a submitted form's token is right for the
// browser and flow.
func checkCSRF(browser, flowID, presented string) bool {
	return pagekit.CheckCSRF(browser, flowID, presented)
}

// sameOriginPost rejects a form post that a browser says came from another
// origin. Requests without an Origin header (non-browser clients) are left
// to the CSRF token.
func (s *Server) sameOriginPost(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(s.issuer)
	if err != nil {
		return false
	}
	return strings.EqualFold(origin, u.Scheme+"://"+u.Host)
}
