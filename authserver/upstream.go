package authserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// upstreamTokens hands out fresh ERP access tokens for tool calls.
//
// A token is refreshed a minute before it expires. Refreshing takes the
// row lock of the user's token (so concurrent calls on every replica wait
// for one refresh and then use its result) behind an in-process
// singleflight (so one replica sends one lock request, not fifty). ERPs
// rotate refresh tokens, so two refreshes racing with one refresh token
// would make the loser look dead: the lock is what prevents that.
type upstreamTokens struct {
	s     *Server
	group singleflight.Group
	// skew is how long before its stated expiry a token is refreshed.
	skew time.Duration
	// timeout bounds one shared refresh, which runs detached from the
	// calls waiting for it.
	timeout time.Duration
	// gateInterval is how long a passed access gate holds before a
	// refresh reads it again.
	gateInterval time.Duration
	// cache holds each user's ERP token while it is fresh (see
	// Deps.Invalidations): a refresh anywhere replaces or deletes the row,
	// which drops it on every replica.
	cache *invalidate.Cache[storage.UpstreamToken]
}

func newUpstreamTokens(s *Server) *upstreamTokens {
	return &upstreamTokens{s: s, skew: time.Minute, timeout: 30 * time.Second, gateInterval: s.deps.AccessGateInterval,
		cache: invalidate.NewCache[storage.UpstreamToken](s.deps.Invalidations, s.deps.CacheTTL)}
}

func (u *upstreamTokens) fresh(t storage.UpstreamToken) bool {
	return time.Until(t.ExpiresAt) > u.skew
}

// accessToken returns a usable ERP access token of user on site. Failures
// are tool errors: AUTH_EXPIRED when the user must sign in again (their
// erpgate grants are then already revoked, so the client's next request
// gets 401 and it re-authorises), UPSTREAM_UNAVAILABLE when a refresh
// failed for now, PERMISSION_DENIED when the access gate, read again on
// refresh, refused the user (their grants are then revoked too).
func (u *upstreamTokens) accessToken(ctx context.Context, site signInSite, user string) (secrets.Secret, error) {
	siteID := site.site.ID.String()
	t, err := u.cache.Get(ctx, siteID+"\x00"+user, func(ctx context.Context) (storage.UpstreamToken, invalidate.Tags, time.Time, error) {
		t, err := u.s.deps.Store.UpstreamToken(ctx, site.site.ID, user)
		// Kept only while fresh: a stale token is refreshed under the lock.
		return t, invalidate.Tags{Site: siteID, Subject: user}, t.ExpiresAt.Add(-u.skew), err
	})
	if errors.Is(err, storage.ErrNoUpstreamToken) {
		return "", signInAgain()
	}
	if errors.Is(err, secrets.ErrUnknownKey) || errors.Is(err, secrets.ErrDecrypt) {
		return "", u.endUnreadable(ctx, site, user, err)
	}
	if err != nil {
		return "", toolerr.Wrap(toolerr.Internal, err, "erpgate could not read your ERP sign-in")
	}
	if u.fresh(t) {
		return t.Access, nil
	}
	return u.sharedRefresh(ctx, site, user, "")
}

// endUnreadable ends the sign-in of a user whose stored ERP token this
// replica cannot open (readErr): it was sealed under a key no longer
// configured, or damaged. Every call would otherwise fail with no way
// forward; now the client is asked to sign the user in again, which stores
// a token under the current key.
func (u *upstreamTokens) endUnreadable(ctx context.Context, site signInSite, user string, readErr error) error {
	if err := u.s.deps.Store.EndUnreadableUpstreamToken(ctx, site.site.ID, user); err != nil {
		return toolerr.Wrap(toolerr.Internal, err, "erpgate could not read your ERP sign-in")
	}
	u.cache.DropUser(site.site.ID.String(), user)
	u.s.log.Warn("a user's ERP token could not be opened; their grants on the site were revoked so that they sign in again",
		zap.String("site_slug", site.site.Slug), zap.Error(readErr))
	return signInAgain()
}

// sharedRefresh runs one refresh per (site, user) on this replica, however
// many calls need it. refused, when set, is an access token the ERP
// refused before its stated expiry: it counts as stale.
func (u *upstreamTokens) sharedRefresh(ctx context.Context, site signInSite, user string, refused secrets.Secret) (secrets.Secret, error) {
	key := site.site.ID.String() + "\x00" + user + "\x00" + hashOf(refused)
	v, err, _ := u.group.Do(key, func() (any, error) {
		// Detached: one caller giving up must not fail the others.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.timeout)
		defer cancel()
		return u.refresh(rctx, site, user, refused)
	})
	if err != nil {
		return "", err
	}
	return v.(storage.UpstreamToken).Access, nil
}

// refresh refreshes the token under the row lock, unless another replica
// did it while this one waited.
func (u *upstreamTokens) refresh(ctx context.Context, site signInSite, user string, refused secrets.Secret) (storage.UpstreamToken, error) {
	t, err := u.s.deps.Store.RefreshUpstreamToken(ctx, site.site.ID, user,
		func(ctx context.Context, current storage.UpstreamToken) (storage.RefreshOutcome, error) {
			if u.fresh(current) && (!refused.IsSet() || current.Access != refused) {
				return storage.RefreshOutcome{}, nil
			}
			if !current.Refresh.IsSet() {
				return storage.RefreshOutcome{Dead: true}, nil
			}
			tok, err := site.oauth.RefreshToken(ctx, site.csite, site.client, u.s.deps.HTTPClient(site.csite, nil), current.Refresh)
			if errors.Is(err, connector.ErrRefreshTokenDead) {
				u.s.deps.Metrics.TokenRefresh("user", metrics.RefreshDead)
				return storage.RefreshOutcome{Dead: true}, nil
			}
			if err != nil {
				u.s.deps.Metrics.TokenRefresh("user", metrics.RefreshFailed)
				return storage.RefreshOutcome{}, err
			}
			u.s.deps.Metrics.TokenRefresh("user", metrics.RefreshOK)
			next := current
			next.Access, next.ExpiresAt = tok.AccessToken, upstreamExpiry(tok)
			if tok.RefreshToken.IsSet() {
				next.Refresh = tok.RefreshToken
			}
			if !u.passesGate(ctx, site, &next) {
				return storage.RefreshOutcome{AccessWithdrawn: true}, nil
			}
			return storage.RefreshOutcome{Replace: &next}, nil
		})
	switch {
	case errors.Is(err, storage.ErrUpstreamAccessWithdrawn):
		u.s.log.Info("access gate refused a user on ERP token refresh; the user's grants on the site were revoked",
			zap.String("site_slug", site.site.Slug))
		return storage.UpstreamToken{}, accessWithdrawn(site)
	case errors.Is(err, storage.ErrUpstreamTokenDead):
		u.s.log.Info("ERP refused a refresh token; the user's grants on the site were revoked",
			zap.String("site_slug", site.site.Slug))
		return storage.UpstreamToken{}, signInAgain()
	case errors.Is(err, storage.ErrNoUpstreamToken):
		return storage.UpstreamToken{}, signInAgain()
	case err != nil:
		u.s.log.Warn("ERP token refresh failed", zap.String("site_slug", site.site.Slug), zap.Error(err))
		return storage.UpstreamToken{}, toolerr.Wrap(toolerr.UpstreamUnavailable, err,
			"erpgate could not renew your ERP sign-in just now; try again shortly")
	}
	return t, nil
}

// passesGate reads the connector's access gate again as the user, with the
// token just refreshed, when it was last passed longer than the interval
// ago, and records a pass in next. Only a clear refusal (Acumatica: 403 on
// the canary inquiry) reports false. A gate that cannot be read (404, 5xx,
// no answer) is a set-up problem: the user keeps working, the warning is
// logged and the next refresh tries again, so that a broken canary locks
// nobody out of work in progress (sign-in still refuses it).
func (u *upstreamTokens) passesGate(ctx context.Context, site signInSite, next *storage.UpstreamToken) bool {
	gate, ok := site.gate()
	if !ok || time.Since(next.GateCheckedAt) < u.gateInterval {
		return true
	}
	check, err := gate.CheckAccess(ctx, site.csite, u.s.deps.HTTPClient(site.csite, site.oauth.TokenAuthorizer(next.Access)))
	switch {
	case err == nil && check.Decision == connector.AccessAllowed:
		next.GateCheckedAt = time.Now()
		return true
	case err == nil && check.Decision == connector.AccessDenied:
		return false
	}
	detail := check.Detail
	if err != nil {
		detail = "the access check could not be completed"
	}
	u.s.log.Warn("access gate could not be checked on ERP token refresh; the user keeps access until it can",
		zap.String("site_slug", site.site.Slug), zap.String("detail", detail))
	return true
}

// accessWithdrawn is the tool error of a call whose refresh found the
// user's access withdrawn; their grants are already revoked.
func accessWithdrawn(site signInSite) *toolerr.Error {
	return toolerr.New(toolerr.PermissionDenied,
		"your ERP administrator has withdrawn your access to AI assistants on %s, so erpgate has ended your sign-in; "+
			"ask your ERP administrator to give you access to AI assistants (erpgate) again", site.site.DisplayName)
}

func signInAgain() *toolerr.Error {
	return toolerr.New(toolerr.AuthExpired,
		"your ERP sign-in has ended; reconnect this MCP server in your AI client to sign in again")
}

// userAuthorizer authorises each upstream request of a tool call with the
// user's current ERP token, looked up (and refreshed if needed) per
// request.
type userAuthorizer struct {
	tokens *upstreamTokens
	site   signInSite
	user   string
}

func (a userAuthorizer) Authorize(req *http.Request) error {
	tok, err := a.tokens.accessToken(req.Context(), a.site, a.user)
	if err != nil {
		return err
	}
	return a.site.oauth.TokenAuthorizer(tok).Authorize(req)
}

// RejectAuthorization is called when the ERP answered 401 to req. An ERP
// may end a token before its stated expiry (revoked, restarted); the
// refused token is then refreshed like an expired one and the request is
// repeated once. It reports false when nothing can be renewed, so the 401
// reaches the connector (AUTH_EXPIRED), and a dead refresh token has by
// then revoked the user's grants as usual.
func (a userAuthorizer) RejectAuthorization(req *http.Request) bool {
	ctx := req.Context()
	t, err := a.tokens.s.deps.Store.UpstreamToken(ctx, a.site.site.ID, a.user)
	if err != nil {
		return false
	}
	probe := &http.Request{Header: http.Header{}}
	if err := a.site.oauth.TokenAuthorizer(t.Access).Authorize(probe); err != nil {
		return false
	}
	if probe.Header.Get("Authorization") != req.Header.Get("Authorization") {
		// Another call renewed it meanwhile: repeat with the stored token.
		a.tokens.cache.DropUser(a.site.site.ID.String(), a.user)
		return true
	}
	_, err = a.tokens.sharedRefresh(ctx, a.site, a.user, t.Access)
	return err == nil
}

var _ connector.RenewableAuthorizer = userAuthorizer{}

// hashOf names a token in a singleflight key without holding its text.
func hashOf(s secrets.Secret) string {
	if !s.IsSet() {
		return ""
	}
	h := sha256.Sum256([]byte(s.Reveal()))
	return hex.EncodeToString(h[:8])
}
