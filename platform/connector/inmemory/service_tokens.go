package inmemory

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ServiceTokens is an in-process connector.ServiceTokenStore: tokens live
// in memory and renewals are serialised per (site, user) by a mutex. It is
// correct within one process only.
type ServiceTokens struct {
	now  func() time.Time
	skew time.Duration

	mu     sync.Mutex
	tokens map[tokenKey]*tokenSlot
}

type tokenKey struct {
	site uuid.UUID
	user string
}

// tokenSlot serialises renewals of one key; mu is held while renewing.
type tokenSlot struct {
	mu    sync.Mutex
	token connector.StoredToken
}

var _ connector.ServiceTokenStore = (*ServiceTokens)(nil)

// NewServiceTokens returns an empty store. now, if set, is the clock (nil:
// time.Now). A token is renewed a minute before it expires.
func NewServiceTokens(now func() time.Time) *ServiceTokens {
	if now == nil {
		now = time.Now
	}
	return &ServiceTokens{now: now, skew: time.Minute, tokens: map[tokenKey]*tokenSlot{}}
}

func (s *ServiceTokens) slot(site uuid.UUID, user string) *tokenSlot {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tokenKey{site, user}
	sl := s.tokens[k]
	if sl == nil {
		sl = &tokenSlot{}
		s.tokens[k] = sl
	}
	return sl
}

func (s *ServiceTokens) fresh(t connector.StoredToken) bool {
	return t.Access.IsSet() && t.ExpiresAt.Sub(s.now()) > s.skew
}

// Token returns the stored token or renews it.
func (s *ServiceTokens) Token(ctx context.Context, site uuid.UUID, user string, renew connector.RenewToken) (secrets.Secret, error) {
	sl := s.slot(site, user)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if s.fresh(sl.token) {
		return sl.token.Access, nil
	}
	tok, err := renew(ctx, sl.token)
	if err != nil {
		return "", err
	}
	next := connector.StoredToken{Access: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: Expiry(s.now(), tok)}
	if !next.Refresh.IsSet() {
		next.Refresh = sl.token.Refresh
	}
	sl.token = next
	return next.Access, nil
}

// Reject expires the stored token if it is still access.
func (s *ServiceTokens) Reject(_ context.Context, site uuid.UUID, user string, access secrets.Secret) error {
	sl := s.slot(site, user)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.token.Access == access {
		sl.token.ExpiresAt = time.Time{}
	}
	return nil
}

// Expiry is when a token issued at now expires: its stated lifetime, or an
// hour when the ERP stated none (Acumatica's default).
func Expiry(now time.Time, t connector.UpstreamToken) time.Time {
	if t.ExpiresIn > 0 {
		return now.Add(t.ExpiresIn)
	}
	return now.Add(time.Hour)
}
