package frappetest

import (
	"crypto/rand"
	"sync"
	"time"
)

// tokenStore is the simulator's "OAuth Bearer Token" table. An OAuth
// provider (authorize/get_token endpoints) can be added in its own file and
// issue tokens through it; header authentication only needs lookup.
type tokenStore struct {
	mu     sync.Mutex
	tokens map[string]*accessToken
}

type accessToken struct {
	user    string
	scope   string // space-separated, as granted
	expires time.Time
	revoked bool
}

func newTokenStore() *tokenStore { return &tokenStore{tokens: map[string]*accessToken{}} }

const tokenAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomToken returns n characters like oauthlib's generate_token.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = tokenAlphabet[int(b[i])%len(tokenAlphabet)]
	}
	return string(b)
}

func (t *tokenStore) issue(email string, ttl time.Duration, scope string) string {
	tok := randomToken(30)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tokens[tok] = &accessToken{user: email, scope: scope, expires: time.Now().Add(ttl)}
	return tok
}

// scope returns the granted scope of a valid token.
func (t *tokenStore) scope(tok string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := t.tokens[tok]
	if at == nil || at.revoked || !time.Now().Before(at.expires) {
		return "", false
	}
	return at.scope, true
}

// lookup returns the user of a valid (unexpired, unrevoked) token.
func (t *tokenStore) lookup(tok string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := t.tokens[tok]
	if at == nil || at.revoked || !time.Now().Before(at.expires) {
		return "", false
	}
	return at.user, true
}

func (t *tokenStore) revoke(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at := t.tokens[tok]; at != nil {
		at.revoked = true
	}
}

// IssueAccessToken creates a Bearer access token for a demo user, valid for
// ttl (wall-clock time), as Frappe's OAuth provider would after a grant of
// the default scope "all openid".
func (s *Simulator) IssueAccessToken(email string, ttl time.Duration) string {
	return s.tokens.issue(email, ttl, "all openid")
}

// RevokeAccessToken marks a token's OAuth Bearer Token document Revoked:
// later requests with it get 401, and its refresh token is dead too.
func (s *Simulator) RevokeAccessToken(token string) {
	s.tokens.revoke(token)
	p := s.oauth()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, g := range p.refresh {
		if g.access == token {
			g.revoked = true
		}
	}
}
