package siteadmin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// The site owner's page signs its owners in at the ERP, and proves some
// changes there before saving them: a new OAuth client secret is saved
// only after a sign-in with it succeeded (the ERP's token endpoint
// authenticates the client with it), and settings that move the site to
// another tenant (the identity key the connector's SiteRules compute) only
// after the owner proved they administer that tenant. Such a change waits
// in owner_changes, sealed, for OwnerChangeTTL.

// OwnerChangeTTL is how long a change waits for its proof: an ERP sign-in.
const OwnerChangeTTL = 15 * time.Minute

// ActionOwnerSignIn is an ERP administrator's sign-in on the owner's page,
// let in or refused.
const ActionOwnerSignIn = "owner_sign_in"

// ActionOwnerSignOutEverywhere is an owner ending all their sessions on
// the site's owner's page, in every browser (web/manage).
const ActionOwnerSignOutEverywhere = "owner_sign_out_everywhere"

// OAuthClient returns the site's OAuth client and the site as its
// connector sees it: what an owner's sign-in signs in with.
func (s *Service) OAuthClient(ctx context.Context, site sites.Site) (connector.Site, connector.OAuthClient, error) {
	csite, err := site.Connector()
	if err != nil {
		return connector.Site{}, connector.OAuthClient{}, internal(err)
	}
	_, fields, err := s.deps.Store.GetConnection(ctx, site.ID, sites.ConnectionOAuth)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		e := newError(Conflict, err, "site %s has no OAuth client, so nobody can sign in to it", toolerr.Quote(site.Slug))
		e.ForPeople = "the site has no OAuth client, so nobody can sign in to it"
		return connector.Site{}, connector.OAuthClient{}, e
	case err != nil:
		return connector.Site{}, connector.OAuthClient{}, internal(err)
	}
	return csite, connector.OAuthClient{ID: fields["client_id"].Reveal(), Secret: fields["client_secret"]}, nil
}

// RecordOwnerSignIn records an ERP user's sign-in on the site's owner's
// page: let in (refusal nil) or refused, with refusal saying why in words
// safe to show.
func (s *Service) RecordOwnerSignIn(ctx context.Context, actor Actor, site sites.Site, evidence string, refusal error) {
	details := map[string]any{}
	if evidence != "" {
		details["evidence"] = evidence
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionOwnerSignIn, details, refusal)
}

// RecordAnonymousOwnerSignIn records a sign-in on the site's owner's page
// that the ERP did not complete (no one was identified), refusal saying
// why in words safe to show and code naming it from a fixed set. Anyone
// may start one: see RecordAnonymousRefusal.
func (s *Service) RecordAnonymousOwnerSignIn(ctx context.Context, site sites.Site, code string, refusal error) {
	s.RecordAnonymousRefusal(ctx, ERPAdmin("unknown ERP user"), site.ID, site.Slug, ActionOwnerSignIn, code, map[string]any{}, refusal)
}

// Refused is a refusal in the person's words, for RecordOwnerSignIn and
// RefuseOwnerChange.
func Refused(format string, args ...any) error { return newError(Rejected, nil, format, args...) }

// OwnerChangeRequest is a change an owner asks for that needs a proof.
type OwnerChangeRequest struct {
	// ClientSecret, when not empty, is the OAuth client's new secret.
	ClientSecret string
	// Settings, when not nil, are the site's new settings.
	Settings json.RawMessage
}

// NeedsProof reports whether replacing site's settings with raw moves the
// site to another identity at its base URL (Acumatica: another tenant),
// which the owner must prove they administer before it is saved. The
// settings are checked by the connector's rules first.
func (s *Service) NeedsProof(site sites.Site, raw json.RawMessage) (bool, error) {
	conn, err := s.connectorOf(site)
	if err != nil {
		return false, err
	}
	settings, err := normalizeSettings(conn, nullToNil(raw))
	if err != nil {
		return false, err
	}
	rules := conn.SiteRules()
	return rules.IdentityOf(settings) != rules.IdentityOf(site.Settings), nil
}

// ProposeOwnerChange checks a change and keeps it until its proof: the
// returned id names it in OwnerChangeTarget, ApplyOwnerChange and
// RefuseOwnerChange. Nothing of it applies yet.
func (s *Service) ProposeOwnerChange(ctx context.Context, actor Actor, site sites.Site, req OwnerChangeRequest) (uuid.UUID, error) {
	id, err := s.proposeOwnerChange(ctx, actor, site, req)
	if err != nil {
		// A change refused before its proof is recorded as the action it
		// would have been.
		action := ActionUpdateSite
		if strings.TrimSpace(req.ClientSecret) != "" || req.Settings == nil {
			action = ActionRotateOAuthSecret
		}
		s.record(ctx, actor, site.ID, site.Slug, action, nil, err)
	}
	return id, err
}

func (s *Service) proposeOwnerChange(ctx context.Context, actor Actor, site sites.Site, req OwnerChangeRequest) (uuid.UUID, error) {
	change := sites.OwnerChange{SiteID: site.ID, ERPUser: actor.Name}
	secret := strings.TrimSpace(req.ClientSecret)
	// Nothing is kept, nor the owner sent to the ERP, for a change that
	// the operator's disable would refuse once proven.
	what := "its settings cannot be changed until they enable it again; nothing was changed"
	if secret != "" || req.Settings == nil {
		what = ownerSecretRefusal
	}
	if err := ownerRefused(actor, site, what); err != nil {
		return uuid.Nil, err
	}
	switch {
	case secret == "" && req.Settings == nil:
		return uuid.Nil, invalid("paste the new client secret")
	case secret != "":
		if _, _, err := s.OAuthClient(ctx, site); err != nil {
			return uuid.Nil, err
		}
		change.ClientSecret = secrets.Secret(secret)
	}
	if req.Settings != nil {
		conn, err := s.connectorOf(site)
		if err != nil {
			return uuid.Nil, err
		}
		settings, err := normalizeSettings(conn, nullToNil(req.Settings))
		if err != nil {
			return uuid.Nil, err
		}
		// Only what the owner changed is kept: the change is applied to
		// the settings as they are after its proof, so that what the
		// operator changed meanwhile stays.
		if change.Settings, err = settingsDiff(site.Settings, settings); err != nil {
			return uuid.Nil, internal(err)
		}
	}
	id, err := s.deps.Store.PutOwnerChange(ctx, change, OwnerChangeTTL)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return uuid.Nil, newError(NotFound, err, "site %s does not exist", toolerr.Quote(site.Slug))
	case err != nil:
		return uuid.Nil, storeError(err)
	}
	return id, nil
}

// OwnerChangeTarget returns what the proof of change id signs in with:
// the site with its new settings, and its OAuth client with the new
// secret.
func (s *Service) OwnerChangeTarget(ctx context.Context, site sites.Site, id uuid.UUID) (connector.Site, connector.OAuthClient, error) {
	change, err := s.ownerChange(ctx, site, id)
	if err != nil {
		return connector.Site{}, connector.OAuthClient{}, err
	}
	csite, client, err := s.OAuthClient(ctx, site)
	if err != nil {
		return connector.Site{}, connector.OAuthClient{}, err
	}
	if change.Settings != nil {
		if csite.Settings, err = s.changedSettings(site, change.Settings); err != nil {
			return connector.Site{}, connector.OAuthClient{}, err
		}
	}
	if change.ClientSecret.IsSet() {
		client.Secret = change.ClientSecret
	}
	return csite, client, nil
}

// ProbeOwnerChange asks the ERP that the proof of change id signs in at
// (the site's address, with the change's settings) whether it answers as
// an ERP of the site's kind, before the owner is sent there: a connector's
// KindProbe, or any HTTP answer for a kind without one. When it does not,
// the change is dropped and its refusal recorded as actor's, and the error
// (Unreachable, or Invalid for an address the transport refuses) says so
// in the owner's words.
func (s *Service) ProbeOwnerChange(ctx context.Context, actor Actor, site sites.Site, id uuid.UUID) error {
	err := s.probeOwnerChange(ctx, site, id)
	if err != nil {
		s.RefuseOwnerChange(ctx, actor, site, id, err)
	}
	return err
}

func (s *Service) probeOwnerChange(ctx context.Context, site sites.Site, id uuid.UUID) error {
	csite, _, err := s.OwnerChangeTarget(ctx, site, id)
	if err != nil {
		return err
	}
	err = s.reachable(ctx, site.Kind, site.BaseURL, csite.Settings)
	if e := (*Error)(nil); errors.As(err, &e) && e.Kind != Internal {
		const notSent = "erpgate did not send you there to sign in, and nothing was changed"
		return &Error{Kind: e.Kind, Message: e.Message + "; the owner was not sent to sign in",
			ForPeople: strings.TrimSuffix(e.PeopleSentence(nil), ".") + ". " + notSent, Err: e.Err}
	}
	return err
}

func (s *Service) ownerChange(ctx context.Context, site sites.Site, id uuid.UUID) (sites.OwnerChange, error) {
	change, err := s.deps.Store.GetOwnerChange(ctx, site.ID, id)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return sites.OwnerChange{}, newError(NotFound, err, "this change waited too long for its sign-in at the ERP and was dropped; nothing was changed")
	case err != nil:
		return sites.OwnerChange{}, internal(err)
	}
	return change, nil
}

// ApplyOwnerChange saves change id once its proof succeeded, as actor
// (who proved it): the new secret (a rotate_oauth_secret event), then the
// new settings (an update_site event). It returns the site as it is now.
func (s *Service) ApplyOwnerChange(ctx context.Context, actor Actor, site sites.Site, id uuid.UUID) (sites.Site, error) {
	change, err := s.ownerChange(ctx, site, id)
	if err != nil {
		return site, err
	}
	defer s.dropOwnerChange(ctx, site, id)
	if change.ClientSecret.IsSet() {
		if _, err := s.RotateOAuthClientSecret(ctx, actor, site, change.ClientSecret.Reveal()); err != nil {
			return site, err
		}
	}
	if change.Settings != nil {
		settings, err := s.changedSettings(site, change.Settings)
		if err != nil {
			s.record(ctx, actor, site.ID, site.Slug, ActionUpdateSite, nil, err)
			return site, err
		}
		return s.UpdateSite(ctx, actor, site, SiteChange{Settings: settings})
	}
	return site, nil
}

// settingsDiff is what after changes in before, two JSON objects: each
// key whose value differs, with its new value, or null when after drops
// it.
func settingsDiff(before, after json.RawMessage) (json.RawMessage, error) {
	var b, a map[string]json.RawMessage
	if err := json.Unmarshal(before, &b); err != nil {
		return nil, fmt.Errorf("siteadmin: stored settings: %w", err)
	}
	if err := json.Unmarshal(after, &a); err != nil {
		return nil, fmt.Errorf("siteadmin: new settings: %w", err)
	}
	diff := map[string]json.RawMessage{}
	for k, v := range a {
		if old, ok := b[k]; !ok || !jsonEqual(old, v) {
			diff[k] = v
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff[k] = json.RawMessage(`null`)
		}
	}
	return json.Marshal(diff)
}

// changedSettings is site's settings as they are now with diff (from
// settingsDiff) applied, checked by the connector's rules again.
func (s *Service) changedSettings(site sites.Site, diff json.RawMessage) (json.RawMessage, error) {
	var current, changed map[string]json.RawMessage
	if err := json.Unmarshal(site.Settings, &current); err != nil || current == nil {
		current = map[string]json.RawMessage{}
	}
	if err := json.Unmarshal(diff, &changed); err != nil {
		return nil, internal(fmt.Errorf("siteadmin: owner change settings: %w", err))
	}
	for k, v := range changed {
		if string(v) == "null" {
			delete(current, k)
		} else {
			current[k] = v
		}
	}
	merged, err := json.Marshal(current)
	if err != nil {
		return nil, internal(err)
	}
	conn, err := s.connectorOf(site)
	if err != nil {
		return nil, err
	}
	return normalizeSettings(conn, merged)
}

// RefuseOwnerChange drops change id after its proof failed, recording the
// refusal (refusal says why, in the person's words).
func (s *Service) RefuseOwnerChange(ctx context.Context, actor Actor, site sites.Site, id uuid.UUID, refusal error) {
	change, err := s.ownerChange(ctx, site, id)
	if err != nil {
		return
	}
	s.dropOwnerChange(ctx, site, id)
	if change.ClientSecret.IsSet() {
		s.record(ctx, actor, site.ID, site.Slug, ActionRotateOAuthSecret, nil, refusal)
	}
	if change.Settings != nil {
		s.record(ctx, actor, site.ID, site.Slug, ActionUpdateSite, nil, refusal)
	}
}

func (s *Service) dropOwnerChange(ctx context.Context, site sites.Site, id uuid.UUID) {
	if err := s.deps.Store.DeleteOwnerChange(context.WithoutCancel(ctx), site.ID, id); err != nil {
		s.log.Error("owner change not deleted; it expires by itself", zap.String("site_slug", site.Slug), zap.Error(err))
	}
}
