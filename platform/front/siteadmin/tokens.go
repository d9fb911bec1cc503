package siteadmin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// IssueServiceToken creates a service token for the site and returns its
// value, which exists nowhere else and cannot be shown again. The token
// expires lifetimeDays days after it is issued, 1 to
// sites.MaxServiceTokenLifetimeDays; 0 issues one that never expires. The
// site needs an api_token connection: without one the error is a Conflict
// that matches sites.ErrNoAPIConnection. A site that already has as many
// active tokens as a site may have (the store's bound, which holds for
// every issuer, the operator included) gets a Conflict that matches
// sites.ErrTooManyServiceTokens. Its owner cannot issue one while the
// operator has it disabled (a Conflict); either may revoke one.
func (s *Service) IssueServiceToken(ctx context.Context, actor Actor, site sites.Site, name string, lifetimeDays int) (sites.ServiceToken, secrets.Secret, error) {
	var (
		st    sites.ServiceToken
		value secrets.Secret
	)
	err := ownerRefused(actor, site, ownerTokenRefusal)
	if err == nil {
		st, value, err = s.issueServiceToken(ctx, partyOf(actor), site, name, lifetimeDays)
	}
	var issued *sites.ServiceToken
	if err == nil {
		issued = &st
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionIssueServiceToken, issuedDetails(name, lifetimeDays, issued), err)
	return st, value, err
}

// issuedDetails are the details of an issue_service_token event: the
// token asked for, and the token issued (nil: none was).
func issuedDetails(name string, lifetimeDays int, st *sites.ServiceToken) map[string]any {
	details := map[string]any{"name": name}
	if lifetimeDays != 0 {
		details["expires_in_days"] = lifetimeDays
	}
	if st != nil {
		details["token_id"], details["prefix"] = st.ID.String(), st.Prefix
		if st.ExpiresAt != nil {
			details["expires_at"] = st.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
	}
	return details
}

// ownerTokenRefusal says why the owner of a site the operator disabled
// cannot issue a service token.
const ownerTokenRefusal = "no service token can be issued until they enable it again; nothing was issued"

// issueServiceToken issues the token as party by: the owner's is refused
// by the write itself when the operator disabled the site after the
// owner's request loaded it.
func (s *Service) issueServiceToken(ctx context.Context, by sites.Party, site sites.Site, name string, lifetimeDays int) (sites.ServiceToken, secrets.Secret, error) {
	if err := sites.ValidateTokenName(name); err != nil {
		return sites.ServiceToken{}, "", validationError(err)
	}
	if err := sites.ValidateTokenLifetimeDays(lifetimeDays); err != nil {
		return sites.ServiceToken{}, "", validationError(err)
	}
	st, value, err := s.deps.Store.IssueServiceTokenBy(ctx, by, site.ID, name, lifetimeDays)
	var full *sites.TooManyServiceTokensError
	switch {
	case errors.Is(err, sites.ErrOperatorDisabled):
		return sites.ServiceToken{}, "", operatorDisabled(err, ownerTokenRefusal)
	case errors.As(err, &full):
		return sites.ServiceToken{}, "", tooManyTokens(site, err, full)
	case errors.Is(err, sites.ErrNoAPIConnection):
		e := newError(Conflict, err, "site %s has no api_token connection; add one before issuing service tokens", toolerr.Quote(site.Slug))
		e.ForPeople = "service tokens act with the site's fixed API credential, which it does not have yet; set the credential first"
		return sites.ServiceToken{}, "", e
	case errors.Is(err, sites.ErrNotFound):
		return sites.ServiceToken{}, "", newError(NotFound, err, "site %s does not exist", toolerr.Quote(site.Slug))
	case err != nil:
		return sites.ServiceToken{}, "", storeError(err)
	}
	return st, value, nil
}

// tooManyTokens is the refusal of a token for site, which has as many
// active tokens as full says it may.
func tooManyTokens(site sites.Site, err error, full *sites.TooManyServiceTokensError) *Error {
	e := newError(Conflict, err, "site %s already has %d active service tokens and a site may have at most %d (ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE); revoke one it no longer uses before issuing another",
		toolerr.Quote(site.Slug), full.Active, full.Bound)
	e.ForPeople = fmt.Sprintf("this site already has %d active service tokens; revoke one you no longer use first", full.Active)
	if full.Active > full.Bound {
		// The bound was lowered since they were issued.
		e.ForPeople = fmt.Sprintf("this site already has %d active service tokens and may have at most %d; revoke those you no longer use first", full.Active, full.Bound)
	}
	return e
}

// ListServiceTokensPage returns up to limit of the site's tokens, revoked
// and expired ones included, oldest first, after the cursor after ("":
// from the first), and the cursor of the next page, "" on the last. The
// next page comes even when the token a cursor followed was deleted
// meanwhile; a cursor that is not one of this site's pages is Invalid.
func (s *Service) ListServiceTokensPage(ctx context.Context, site sites.Site, after string, limit int) ([]sites.ServiceToken, string, error) {
	list, next, err := s.deps.Store.ListServiceTokensPage(ctx, site.ID, after, limit)
	switch {
	case errors.Is(err, sites.ErrNotFound), errors.Is(err, sites.ErrBadCursor):
		return nil, "", invalid("after must be the next of a previous page of this site's tokens")
	case err != nil:
		return nil, "", internal(err)
	}
	return list, next, nil
}

// EndedTokensShown is how many revoked or expired tokens a page lists,
// the latest to end first; older ones are counted, not listed.
const EndedTokensShown = 20

// ListRecentServiceTokens returns the site's tokens created at or after
// since, as a page lists them: every active one and the EndedTokensShown
// that ended last, with how many ended before those.
func (s *Service) ListRecentServiceTokens(ctx context.Context, site sites.Site, since time.Time) (sites.RecentServiceTokens, error) {
	list, err := s.deps.Store.ListRecentServiceTokens(ctx, site.ID, since, EndedTokensShown)
	if err != nil {
		return sites.RecentServiceTokens{}, internal(err)
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
		e := newError(NotFound, err, "%s is a service token's value, not its id, and revokes nothing: find the token whose prefix is %s among site %s's tokens and revoke it by its id",
			toolerr.Quote(shown), prefix, toolerr.Quote(site.Slug))
		e.ForPeople = "a service token's value was given instead of its id, so nothing was revoked: revoke the token whose prefix is " + prefix + " by its id"
		err = e
	case errors.Is(err, sites.ErrNotFound):
		e := newError(NotFound, err, "site %s has no service token %s", toolerr.Quote(site.Slug), toolerr.Quote(ref))
		e.ForPeople = "the site has no such service token, so nothing was revoked"
		err = e
	case err != nil:
		err = internal(err)
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionRevokeServiceToken, map[string]any{"token_id": shown}, err)
	return err
}

// DefaultTokenLifetimeDays is the expiry the pages choose for a new token
// unless the person changes it.
const DefaultTokenLifetimeDays = 90

// TokenLifetimeChoice is one expiry a page's form offers for a new token.
type TokenLifetimeChoice struct {
	// Value is what the form sends: a number of days, or "never".
	Value, Label string
	Selected     bool
}

// tokenLifetimeDays are the lifetimes the pages offer, in days; never
// comes last.
var tokenLifetimeDays = []int{30, 90, 365}

// TokenLifetimeChoices are the expiries a page's form offers, with the
// default selected.
func TokenLifetimeChoices() []TokenLifetimeChoice {
	choices := make([]TokenLifetimeChoice, 0, len(tokenLifetimeDays)+1)
	for _, d := range tokenLifetimeDays {
		v := strconv.Itoa(d)
		choices = append(choices, TokenLifetimeChoice{Value: v, Label: v + " days", Selected: d == DefaultTokenLifetimeDays})
	}
	return append(choices, TokenLifetimeChoice{Value: "never", Label: "Never"})
}

// FormTokenLifetime reads a page's expiry choice as IssueServiceToken's
// lifetimeDays (0: never). Only the choices TokenLifetimeChoices offers
// are accepted; an empty value (a form from before the choice existed)
// is the default. Anything else is Invalid.
func FormTokenLifetime(value string) (int, error) {
	switch value {
	case "":
		return DefaultTokenLifetimeDays, nil
	case "never":
		return 0, nil
	}
	for _, d := range tokenLifetimeDays {
		if value == strconv.Itoa(d) {
			return d, nil
		}
	}
	return 0, invalid("choose when the token expires: after 30, 90 or 365 days, or never")
}

// TokenExpiry says when the token st, just issued, runs out, as the pages
// put it: "It expires on 2027-03-07 09:15 UTC, 90 days from
// now." or "It never expires."
func TokenExpiry(st sites.ServiceToken) string {
	if st.ExpiresAt == nil {
		return "It never expires."
	}
	days := int(st.ExpiresAt.Sub(st.CreatedAt).Round(time.Hour) / (24 * time.Hour))
	return fmt.Sprintf("It expires on %s UTC, %d days from now.", st.ExpiresAt.UTC().Format("2006-01-02 15:04"), days)
}
