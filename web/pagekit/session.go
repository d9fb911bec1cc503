package pagekit

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// UserSession is a session cookie that names a person on one scope (a
// site's id): the value "<scope>|<user>" signed for Purpose until
// Lifetime after it starts. Nothing is stored; every replica with the
// signer's key verifies it, and a session of one scope never works on
// another. The site owner's page and the approval page use one each,
// with their own cookie, purpose and key.
type UserSession struct {
	Kit      *Kit
	Signer   *Signer
	Cookie   string
	Purpose  string
	Lifetime time.Duration
}

// User returns the user of the request's session for scope at now. A
// session of another scope, an expired or a forged one gives nothing.
func (s UserSession) User(r *http.Request, scope string, now time.Time) (string, bool) {
	raw, ok := s.Kit.ReadCookie(r, s.Cookie)
	if !ok {
		return "", false
	}
	value, ok := s.Signer.Verify(s.Purpose, raw, now)
	if !ok {
		return "", false
	}
	got, user, ok := strings.Cut(value, "|")
	if !ok || got != scope || user == "" {
		return "", false
	}
	return user, true
}

// Signed returns the request's session cookie when it is one erpgate
// signed for the purpose and it has not expired at now, of whatever scope:
// what tells a person signed in somewhere from anyone before the scope's
// subject is looked up.
func (s UserSession) Signed(r *http.Request, now time.Time) (string, bool) {
	raw, ok := s.Kit.ReadCookie(r, s.Cookie)
	if !ok {
		return "", false
	}
	if _, ok := s.Signer.Verify(s.Purpose, raw, now); !ok {
		return "", false
	}
	return raw, true
}

// Start sets the session cookie for user on scope, from now.
func (s UserSession) Start(w http.ResponseWriter, scope, user string, now time.Time) {
	value := s.Signer.Sign(s.Purpose, scope+"|"+user, now.Add(s.Lifetime))
	http.SetCookie(w, s.Kit.Cookie(s.Cookie, value, s.Lifetime))
}

// End deletes the session cookie.
func (s UserSession) End(w http.ResponseWriter) { http.SetCookie(w, s.Kit.Cookie(s.Cookie, "", 0)) }

// CrossOrigin reports whether a form post says it comes from another
// origin than erpgate's public one. A post without an Origin header is
// not called cross-origin here: its CSRF token decides.
func (k *Kit) CrossOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return origin != "" && !strings.EqualFold(origin, k.origin)
}

// FormActionWith is the form-action of a page whose forms post to
// erpgate and may be answered with a redirect to the origin of other (an
// ERP's base URL, where a sign-in continues).
func FormActionWith(other string) []string {
	out := []string{"'self'"}
	if u, err := url.Parse(other); err == nil && u.Host != "" {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out
}
