package authserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/secrets"
)

// The browser-binding cookie ties a sign-in flow to the browser that
// started it. Over https it is a __Host- cookie: Secure, host-only, Path=/.
// Browsers refuse Secure cookies on plain-http pages (and a __Host- cookie
// must be Secure), so in development — erpgate served over http on
// loopback or a configured development host — the same cookie is set
// without the prefix and without Secure. Either way it is HttpOnly and
// SameSite=Lax: Lax, not Strict, because the user comes back from the ERP
// by a cross-site top-level redirect, which must carry it.
const (
	browserCookieSecure = "__Host-erpgate_signin"
	browserCookieDev    = "erpgate_signin"
)

func (s *Server) browserCookieName() string {
	if s.devMode {
		return browserCookieDev
	}
	return browserCookieSecure
}

// browserID returns the browser-binding value, if the request carries one.
func (s *Server) browserID(r *http.Request) (string, bool) {
	c, err := r.Cookie(s.browserCookieName())
	if err != nil || len(c.Value) < 32 {
		return "", false
	}
	return c.Value, true
}

// ensureBrowserID returns the request's binding value, or sets a new one.
// The cookie lives as long as a sign-in may take.
func (s *Server) ensureBrowserID(w http.ResponseWriter, r *http.Request) (string, error) {
	id, ok := s.browserID(r)
	if !ok {
		tok, err := secrets.NewToken("egb")
		if err != nil {
			return "", err
		}
		id = tok.Value.Reveal()
	}
	http.SetCookie(w, &http.Cookie{
		Name:     s.browserCookieName(),
		Value:    id,
		Path:     "/",
		MaxAge:   int(s.deps.SignInTimeout.Seconds()),
		HttpOnly: true,
		Secure:   !s.devMode,
		SameSite: http.SameSiteLaxMode,
	})
	return id, nil
}

// csrfToken is the token every form of a flow carries: an HMAC of the flow
// id keyed by the browser-binding cookie, which a cross-site page can
// neither read nor guess (a synchronizer token that needs no storage).
func csrfToken(browser, flowID string) string {
	m := hmac.New(sha256.New, []byte(browser))
	m.Write([]byte("erpgate csrf\x00" + flowID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF reports whether a submitted form's token is right for the
// browser and flow.
func checkCSRF(browser, flowID, presented string) bool {
	return presented != "" && hmac.Equal([]byte(csrfToken(browser, flowID)), []byte(presented))
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
