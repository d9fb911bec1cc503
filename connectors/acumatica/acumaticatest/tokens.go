package acumaticatest

import (
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"time"
)

// Scopes Acumatica's identity server knows.
var knownScopes = map[string]bool{"openid": true, "profile": true, "email": true, "phone": true,
	"api": true, "offline_access": true, "api:concurrent_access": true}

// refreshChainLifetime: a refresh-token chain expires 30 days after the
// initial authentication (the default absolute lifetime).
const refreshChainLifetime = 30 * 24 * time.Hour

// sessionIdle: unclosed API sessions expire after 10 minutes.
const sessionIdle = 10 * time.Minute

type accessToken struct {
	value     string
	user      *User
	client    string
	scopes    []string
	passGen   int // the user's password generation when issued
	expires   time.Time
	revoked   bool // revocation disables the token but does not end its session
	loggedOut bool // POST /entity/auth/logout ended the token's session
}

func (t *accessToken) has(scope string) bool { return slices.Contains(t.scopes, scope) }

func (t *accessToken) live(now time.Time) bool { return now.Before(t.expires) }

type refreshToken struct {
	value      string
	user       *User
	client     string
	scopes     []string
	chainStart time.Time
	passGen    int
	dead       bool
}

// apiSession is a server-side session: a cookie sign-in, or one of the
// per-request sessions of an api:concurrent_access token.
type apiSession struct {
	id       string
	user     *User
	lastUsed time.Time
	closed   bool
}

// tokenStore holds tokens, sessions and the counters tests inspect.
type tokenStore struct {
	mu        sync.Mutex
	access    map[string]*accessToken
	refresh   map[string]*refreshToken
	sessions  map[string]*apiSession
	refreshes int
	// passwordGen counts each user's password changes.
	passwordGen map[*User]int
}

func newTokenStore() *tokenStore {
	return &tokenStore{access: map[string]*accessToken{}, refresh: map[string]*refreshToken{},
		sessions: map[string]*apiSession{}, passwordGen: map[*User]int{}}
}

// opaqueToken returns a 43-character base64url reference token.
func opaqueToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// seatsInUse counts licence seats: each distinct user holding a live
// access token (scope api: one session per grant, closed when the token
// expires; revoking the token does not close it) plus every open cookie
// or api:concurrent_access session. Callers hold ts.mu.
func (ts *tokenStore) seatsInUse(now time.Time) int {
	users := map[string]bool{}
	for _, t := range ts.access {
		if t.live(now) && !t.loggedOut && !t.has("api:concurrent_access") && t.has("api") {
			users[strings.ToLower(t.user.Username)] = true
		}
	}
	n := len(users)
	for _, s := range ts.sessions {
		if !s.closed && now.Sub(s.lastUsed) < sessionIdle {
			n++
		}
	}
	return n
}

// userSeated reports whether the user already holds a seat through a
// live api-scope token.
func (ts *tokenStore) userSeated(u *User, now time.Time) bool {
	for _, t := range ts.access {
		if t.user == u && t.live(now) && !t.loggedOut && t.has("api") && !t.has("api:concurrent_access") {
			return true
		}
	}
	return false
}

// SeatsInUse returns the API-user licence seats currently occupied.
func (s *Simulator) SeatsInUse() int {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return s.tokens.seatsInUse(s.now())
}

// RefreshCount returns how many refresh_token grants succeeded.
func (s *Simulator) RefreshCount() int {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return s.tokens.refreshes
}

// ExpireTokens makes every access token expire now (their seats free up;
// refresh tokens stay valid).
func (s *Simulator) ExpireTokens() {
	now := s.now()
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	for _, t := range s.tokens.access {
		if t.expires.After(now) {
			t.expires = now
		}
	}
}

// RevokeRefreshTokens kills every refresh token of a user, so the next
// refresh grant fails with invalid_grant.
func (s *Simulator) RevokeRefreshTokens(username string) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	for _, t := range s.tokens.refresh {
		if strings.EqualFold(t.user.Username, username) {
			t.dead = true
		}
	}
}

// ChangePassword sets a user's password, as an administrator resetting it
// would. Tokens issued before keep their lifetime but no longer work: a
// call with one is answered HTTP 500 "Error: Invalid credentials. Please
// try again." (PXException), and a refresh grant with one of their refresh
// tokens fails (400 invalid_grant, or that 500 with
// Options.InvalidCredentials500).
func (s *Simulator) ChangePassword(username, password string) {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	u := s.userByName(username)
	if u == nil {
		return
	}
	u.Password = password
	s.tokens.passwordGen[u]++
}

// credentialsChanged reports whether u's password changed since a token
// of password generation gen was issued.
func (s *Simulator) credentialsChanged(u *User, gen int) bool {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	return s.tokens.passwordGen[u] != gen
}

// lookupAccess returns a usable access token.
func (s *Simulator) lookupAccess(value string) *accessToken {
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	t := s.tokens.access[value]
	if t == nil || t.revoked || !t.live(s.now()) {
		return nil
	}
	return t
}
