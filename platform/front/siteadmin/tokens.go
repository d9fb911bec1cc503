package siteadmin

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// IssueServiceToken creates a service token for the site and returns its
// value, which exists nowhere else and cannot be shown again. The token
// expires lifetimeDays days after it is issued, 1 to
// sites.MaxServiceTokenLifetimeDays; 0 issues one that never expires. The
// site needs an api_token connection: without one the error is a Conflict
// that matches sites.ErrNoAPIConnection.
func (s *Service) IssueServiceToken(ctx context.Context, actor Actor, site sites.Site, name string, lifetimeDays int) (sites.ServiceToken, secrets.Secret, error) {
	st, value, err := s.issueServiceToken(ctx, site, name, lifetimeDays)
	details := map[string]any{"name": name, "expires_in_days": lifetimeDays}
	if err == nil {
		details["token_id"], details["prefix"] = st.ID.String(), st.Prefix
		if st.ExpiresAt != nil {
			details["expires_at"] = st.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionIssueServiceToken, details, err)
	return st, value, err
}

func (s *Service) issueServiceToken(ctx context.Context, site sites.Site, name string, lifetimeDays int) (sites.ServiceToken, secrets.Secret, error) {
	if err := sites.ValidateTokenName(name); err != nil {
		return sites.ServiceToken{}, "", validationError(err)
	}
	if err := sites.ValidateTokenLifetimeDays(lifetimeDays); err != nil {
		return sites.ServiceToken{}, "", validationError(err)
	}
	st, value, err := s.deps.Store.IssueServiceTokenWithLifetime(ctx, site.ID, name, lifetimeDays)
	switch {
	case errors.Is(err, sites.ErrNoAPIConnection):
		return sites.ServiceToken{}, "", newError(Conflict, err, "site %q has no api_token connection; add one before issuing service tokens", site.Slug)
	case errors.Is(err, sites.ErrNotFound):
		return sites.ServiceToken{}, "", newError(NotFound, err, "site %q does not exist", site.Slug)
	case err != nil:
		return sites.ServiceToken{}, "", storeError(err)
	}
	return st, value, nil
}

// ListServiceTokens returns the site's tokens, revoked and expired ones
// included.
func (s *Service) ListServiceTokens(ctx context.Context, site sites.Site) ([]sites.ServiceToken, error) {
	list, err := s.deps.Store.ListServiceTokens(ctx, site.ID)
	if err != nil {
		return nil, internal(err)
	}
	return list, nil
}

// RevokeServiceToken revokes the site's token tokenID; ref is how the
// person named it, for the message when there is no such token (tokenID is
// uuid.Nil when ref was not an id at all).
//
// A ref that is a token's value (someone revoking a token they found
// leaked) is never repeated, in the refusal or its audit event: only its
// display prefix, by which the listing shows the token.
func (s *Service) RevokeServiceToken(ctx context.Context, actor Actor, site sites.Site, tokenID uuid.UUID, ref string) error {
	err := sites.ErrNotFound
	if tokenID != uuid.Nil {
		err = s.deps.Store.RevokeServiceToken(ctx, site.ID, tokenID)
	}
	shown := ref
	prefix, isValue := secrets.DisplayPrefixOf(sites.ServiceTokenPrefix, ref)
	if isValue {
		shown = prefix + "…"
	}
	switch {
	case isValue && errors.Is(err, sites.ErrNotFound):
		err = newError(NotFound, err, "%q is a service token's value, not its id, and revokes nothing: find the token whose prefix is %s among site %q's tokens and revoke it by its id",
			shown, prefix, site.Slug)
	case errors.Is(err, sites.ErrNotFound):
		err = newError(NotFound, err, "site %q has no service token %q", site.Slug, ref)
	case err != nil:
		err = internal(err)
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionRevokeServiceToken, map[string]any{"token_id": shown}, err)
	return err
}
