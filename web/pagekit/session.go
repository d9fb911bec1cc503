package pagekit

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// UserSession is a session cookie that names a person on one scope (a
// site's id): the value "v1:<random id>.<mark>:<scope>|<user>" signed for
// Purpose until Lifetime after it starts (sessions made before the mark,
// "v1:<random id>:…", and before the random id, "<scope>|<user>", are
// read until they expire). Nothing is stored while it is in use: every
// replica with the signer's key verifies it, and a session of one scope
// never works on another. Ending it (signing out) records the cookie in
// Ends, which every replica checks, so that a copy of the cookie stops
// working too; ending a person's sessions everywhere records the person
// with a mark from Ends, and each session carries the mark Ends gave it
// as it began, so that every session of theirs that began before stops
// working. The site owner's page and the approval page use one each,
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

// SessionEnds records and checks ended sessions by their cookie's value,
// and people's sessions ended everywhere by the person
// (platform/store/pagesession.Store). A person is a string that names the
// page, the scope and the user (UserSession.person).
type SessionEnds interface {
	// End records that the session of cookie ended; it would have
	// expired at expires.
	End(ctx context.Context, cookie string, expires time.Time) error
	// Mark returns the mark of a session that begins now: above that of
	// every EndEverywhere so far.
	Mark(ctx context.Context) (int64, error)
	// EndEverywhere records that every session of person that began
	// before now (with a lower mark) ended; the last of them would have
	// expired at expires.
	EndEverywhere(ctx context.Context, person string, expires time.Time) error
	// Ended reports whether the session of cookie, person's that began
	// with mark, was ended, by itself or everywhere.
	Ended(ctx context.Context, cookie, person string, mark int64) (bool, error)
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
	// A session made before marks has mark 0: below every one that
	// signing out everywhere takes.
	var mark int64
	if rest, ok := strings.CutPrefix(value, sessionV1); ok {
		// The random id only makes each sign-in's cookie its own, so
		// that ending one ends no other (the record is the cookie's).
		var id string
		if id, value, ok = strings.Cut(rest, ":"); !ok {
			return "", false, nil
		}
		if _, m, marked := strings.Cut(id, "."); marked {
			n, err := strconv.ParseInt(m, 10, 64)
			if err != nil || n <= 0 {
				return "", false, nil
			}
			mark = n
		}
	}
	got, user, ok := strings.Cut(value, "|")
	if !ok || got != scope || user == "" {
		return "", false, nil
	}
	if s.Ends == nil {
		return "", false, errNoEnds
	}
	ended, err := s.Ends.Ended(r.Context(), raw, s.person(scope, user), mark)
	if err != nil || ended {
		return "", false, err
	}
	return user, true, nil
}

// person names user's sessions of this page on scope for Ends: the ERPs
// name a person in any case ("Ana@example.com" signs in as
// "ana@example.com"), so the user is lower-cased.
func (s UserSession) person(scope, user string) string {
	return s.Purpose + "\x00" + scope + "\x00" + strings.ToLower(user)
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
// by). The session carries a mark from Ends; when none can be taken, no
// session is started (err).
func (s UserSession) Start(w http.ResponseWriter, r *http.Request, scope, user string, now time.Time) (string, error) {
	if s.Ends == nil {
		return "", errNoEnds
	}
	mark, err := s.Ends.Mark(r.Context())
	if err != nil {
		return "", err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id) // crypto/rand.Read never fails (Go 1.24)
	// A replica that predates marks reads "<random id>.<mark>" as the
	// random id, which it does not look into.
	value := s.Signer.Sign(s.Purpose, sessionV1+base64.RawURLEncoding.EncodeToString(id)+"."+strconv.FormatInt(mark, 10)+":"+scope+"|"+user, now.Add(s.Lifetime))
	http.SetCookie(w, s.Kit.Cookie(s.Cookie, value, s.Lifetime))
	return value, nil
}

// EndEverywhere deletes the session cookie and ends every session of user
// on scope that began before now, in any browser, for every replica: this
// page's only (another page's sessions, another user's and the user's on
// another scope go on). The record lasts until the last of them would
// expire (now and Lifetime; the store's sweep allows an hour for
// clocks).
func (s UserSession) EndEverywhere(w http.ResponseWriter, r *http.Request, scope, user string, now time.Time) error {
	http.SetCookie(w, s.Kit.Cookie(s.Cookie, "", 0))
	if s.Ends == nil {
		return errNoEnds
	}
	return s.Ends.EndEverywhere(r.Context(), s.person(scope, user), now.Add(s.Lifetime))
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
