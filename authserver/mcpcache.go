package authserver

import (
	"context"
	"time"

	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/invalidate"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

// grant is what an MCP request needs from its access token: who it acts
// for, where, and for which MCP URL. Cached per token (see Deps.Invalidations),
// it saves the token's introspection and the site's loading and decryption
// on every warm call.
type grant struct {
	subject  string
	audience fosite.Arguments
	site     signInSite
	// clientID is the MCP client the token was issued to, for usage
	// events.
	clientID string
}

// siteLoadError is a token that introspected well but whose site could not
// be loaded; the audience is kept so that a token for another URL is
// refused for that reason first, as before the cache.
type siteLoadError struct {
	audience fosite.Arguments
	err      error
}

func (e *siteLoadError) Error() string { return e.err.Error() }
func (e *siteLoadError) Unwrap() error { return e.err }

// grantOf returns the grant of an access token, from the cache when a
// replica has not been told of a change since it was read. A token that is
// not cached is introspected only if admit lets its source make one more
// lookup; the lookup is charged to the source only when the token is not
// valid.
//
// A token erpgate signed is looked up even when admit refuses its source:
// sources are shared (an office's NAT, a hosted AI client's outgoing
// addresses), and whoever else sends made-up tokens from there must not
// lock out a person whose token is new to this replica. Only erpgate can
// sign one, so this costs a lookup per token it issued; one that fails
// (revoked, expired, of a disabled site) is remembered and bounded again.
func (s *Server) grantOf(ctx context.Context, token string, admit sourcelimit.Admit) (grant, error) {
	key := secrets.HashToken(token)
	return s.grants.Get(ctx, string(key[:]), func(ctx context.Context) (grant, invalidate.Tags, time.Time, error) {
		charge, err := admit()
		if err != nil {
			if !s.signedAndUntried(ctx, key, token) {
				return grant{}, invalidate.Tags{}, time.Time{}, err
			}
			charge = func() { s.signedFailed.Add(key) }
		}
		sess := &storage.Session{}
		use, ar, err := s.provider.IntrospectToken(ctx, token, fosite.AccessToken, sess, ScopeRead)
		if err == nil && use != fosite.AccessToken {
			// The configuration stops fosite from validating refresh
			// tokens here; this holds even if that ever changes.
			err = fosite.ErrInvalidTokenFormat
		}
		if err != nil && !database.IsUnavailable(err) {
			charge()
		}
		if err != nil {
			return grant{}, invalidate.Tags{}, time.Time{}, err
		}
		audience := ar.GetGrantedAudience()
		site, err := s.loadSignInSite(ctx, sess.SiteID)
		if err != nil {
			if !database.IsUnavailable(err) {
				// Not cached either: each request with the token is a
				// lookup (its site disabled, say).
				charge()
			}
			return grant{}, invalidate.Tags{}, time.Time{}, &siteLoadError{audience: audience, err: err}
		}
		tags := invalidate.Tags{Site: sess.SiteID.String(), Subject: sess.Subject}
		return grant{subject: sess.Subject, audience: audience, site: site, clientID: ar.GetClient().GetID()}, tags, sess.GetExpiresAt(fosite.AccessToken), nil
	})
}

// ForgetSite drops what this replica cached of a site. The replica that
// changes a site calls it (through sites.Store.OnChange) before
// acknowledging the change; the others learn of it from the notification.
func (s *Server) ForgetSite(siteID string) {
	s.grants.DropSite(siteID)
	s.upstream.cache.DropSite(siteID)
}

// forgetUser drops what this replica cached of a user on a site.
func (s *Server) forgetUser(siteID, user string) {
	s.grants.DropUser(siteID, user)
	s.upstream.cache.DropUser(siteID, user)
}

// signedAndUntried reports whether token is one erpgate signed that has
// not failed a lookup on this replica.
func (s *Server) signedAndUntried(ctx context.Context, key [32]byte, token string) bool {
	return !s.signedFailed.Has(key) && s.signer.Validate(ctx, token) == nil
}
