package pagekit

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// UserSession is a session cookie that names a person on one scope (a
// site's id): the value "v1:<random id>:<scope>|<user>" signed for Purpose
// until Lifetime after it starts (sessions made before the random id,
// "<scope>|<user>", are read until they expire). Nothing is stored while
// it is in use: every
// replica with the signer's key verifies it, and a session of one scope
// never works on another. Ending it (signing out) records the cookie in
// Ends, which every replica checks, so that a copy of the cookie stops
// working too. The site owner's page and the approval page use one each,
// with their own cookie, purpose and key.
type UserSession struct {
	Kit      *Kit
	Signer   *Signer
	Cookie   string
	Purpose  string
	Lifetime time.Duration
	// Ends holds the sessions that were ended; nil refuses every
	// session (a wiring mistake must not make sign-out a no-op).
	Ends SessionEnds
}

// SessionEnds records and checks ended sessions by their cookie's value
// (platform/store/pagesession.Store).
type SessionEnds interface {
	// End records that the session of cookie ended; it would have
	// expired at expires.
	End(ctx context.Context, cookie string, expires time.Time) error
	// Ended reports whether the session of cookie was ended.
	Ended(ctx context.Context, cookie string) (bool, error)
}

// errNoEnds is User's error when the session has no Ends to check.
var errNoEnds = errors.New("pagekit: a user session without Ends")

// User returns the user of the request's session for scope at now. A
// session of another scope, an expired, an ended or a forged one gives
// nothing; err is set when whether it ended could not be checked (the
// session is then refused too).
func (s UserSession) User(r *http.Request, scope string, now time.Time) (user string, ok bool, err error) {
	raw, ok := s.Kit.ReadCookie(r, s.Cookie)
	if !ok {
		return "", false, nil
	}
	value, ok := s.Signer.Verify(s.Purpose, raw, now)
	if !ok {
		return "", false, nil
	}
	if rest, ok := strings.CutPrefix(value, sessionV1); ok {
		// The random id only makes each sign-in's cookie its own, so
		// that ending one ends no other (the record is the cookie's).
		if _, value, ok = strings.Cut(rest, ":"); !ok {
			return "", false, nil
		}
	}
	got, user, ok := strings.Cut(value, "|")
	if !ok || got != scope || user == "" {
		return "", false, nil
	}
	if s.Ends == nil {
		return "", false, errNoEnds
	}
	ended, err := s.Ends.Ended(r.Context(), raw)
	if err != nil || ended {
		return "", false, err
	}
	return user, true, nil
}

// Signed returns the request's session cookie when it is one erpgate
// signed for the purpose and it has not expired at now, of whatever scope
// and whether or not it was ended: what tells a person signed in
// somewhere from anyone before the scope's subject is looked up.
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

// sessionV1 begins the value of a session with a random id. A replica
// that predates it reads no scope from such a value, so refuses it rather
// than misreading it.
const sessionV1 = "v1:"

// Start sets the session cookie for user on scope, from now, and returns
// the cookie's value (what End and a page's own records know the session
// by).
func (s UserSession) Start(w http.ResponseWriter, scope, user string, now time.Time) string {
	id := make([]byte, 16)
	_, _ = rand.Read(id) // crypto/rand.Read never fails (Go 1.24)
	value := s.Signer.Sign(s.Purpose, sessionV1+base64.RawURLEncoding.EncodeToString(id)+":"+scope+"|"+user, now.Add(s.Lifetime))
	http.SetCookie(w, s.Kit.Cookie(s.Cookie, value, s.Lifetime))
	return value
}

// End deletes the session cookie and, when the request carries a session
// erpgate signed, records it in Ends until it expires, so that no copy of
// it works any more. The record lasts until the expiry signed in the
// cookie, which every replica compares with its clock, not until this
// replica's now and Lifetime; and a cookie that looks expired on this
// replica's clock is recorded too, as others may still take it. The
// cookie is deleted even when the record fails (err): then copies go on
// working until they expire.
func (s UserSession) End(w http.ResponseWriter, r *http.Request, now time.Time) error {
	http.SetCookie(w, s.Kit.Cookie(s.Cookie, "", 0))
	raw, ok := s.Kit.ReadCookie(r, s.Cookie)
	if !ok {
		return nil
	}
	expires, ok := s.Signer.Expiry(s.Purpose, raw)
	if !ok {
		return nil
	}
	if s.Ends == nil {
		return errNoEnds
	}
	return s.Ends.End(r.Context(), raw, expires)
}

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
