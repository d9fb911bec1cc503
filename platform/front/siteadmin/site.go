package siteadmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// NewSite is a site to register, as a person gave it.
type NewSite struct {
	Slug        string
	Kind        string
	DisplayName string
	BaseURL     string
	// Settings is the connector's settings as JSON; nil means {}.
	Settings json.RawMessage
	// SharedCallback keeps the shared redirect URI (sites.Site.CallbackPath):
	// only for a registration begun before sites had their own.
	SharedCallback bool
}

// SiteChange changes some of a site's attributes; nil fields are kept.
// Settings, when not nil, replaces the settings as a whole.
type SiteChange struct {
	DisplayName *string
	BaseURL     *string
	Settings    json.RawMessage
	Status      *string
	// SharedCallback false moves a site from the shared redirect URI to
	// its own; true is refused: there is no way back.
	SharedCallback *bool
}

// CreateSite registers a site: the slug and display name by the registry's
// rules, the base URL and settings by the connector's, and the ERP's
// address by the address policy.
func (s *Service) CreateSite(ctx context.Context, actor Actor, in NewSite) (sites.Site, error) {
	site, err := s.createSite(ctx, in)
	details := map[string]any{"kind": in.Kind, "base_url": site.BaseURL, "display_name": site.DisplayName, "settings": site.Settings}
	if err != nil {
		details = map[string]any{"kind": in.Kind}
	}
	slug := in.Slug
	if err == nil {
		slug = site.Slug
	}
	s.record(ctx, actor, site.ID, slug, ActionCreateSite, details, err)
	return site, err
}

func (s *Service) createSite(ctx context.Context, in NewSite) (sites.Site, error) {
	checked, err := s.checkNewSite(ctx, in, true)
	if err != nil {
		return sites.Site{}, err
	}
	site, err := s.deps.Store.CreateSite(ctx, sites.NewSite{
		Slug: in.Slug, Kind: checked.Kind, DisplayName: checked.DisplayName, BaseURL: checked.BaseURL,
		Settings: checked.Settings, IdentityKey: checked.IdentityKey, SharedCallback: in.SharedCallback,
	})
	if err != nil {
		return sites.Site{}, siteWriteError(err, in.Slug, checked.BaseURL, checked.rules)
	}
	return site, nil
}

// CheckedSite is a new site as CreateSite's rules normalised it, not
// stored.
type CheckedSite struct {
	Kind        string
	DisplayName string
	BaseURL     string
	Settings    json.RawMessage
	IdentityKey string
	// IdentityName names what tells sites at one base URL apart
	// ("tenant"), "" when nothing does.
	IdentityName string
	rules        connector.SiteRules
}

// CheckNewSite checks a site to register by CreateSite's rules, except the
// slug (in.Slug is ignored), and stores nothing: self-service
// registration checks what a person typed before its proof of ownership.
// It does not say whether the address is already registered: an anonymous
// person must not learn that; CreateSite refuses it after the proof.
func (s *Service) CheckNewSite(ctx context.Context, in NewSite) (CheckedSite, error) {
	return s.checkNewSite(ctx, in, false)
}

func (s *Service) checkNewSite(ctx context.Context, in NewSite, withSlug bool) (CheckedSite, error) {
	in.DisplayName = strings.TrimSpace(in.DisplayName)
	var missing []string
	for _, f := range []struct {
		name, value string
		needed      bool
	}{
		{"slug", in.Slug, withSlug}, {"kind", in.Kind, true}, {"display_name", in.DisplayName, true}, {"base_url", in.BaseURL, true},
	} {
		if f.needed && strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		e := invalid("missing required %s: %s", plural(len(missing), "field", "fields"), strings.Join(missing, ", "))
		e.Missing = missing
		return CheckedSite{}, e
	}
	if withSlug {
		if err := sites.ValidateSlug(in.Slug); err != nil {
			return CheckedSite{}, validationError(err)
		}
	}
	conn, ok := s.deps.Registry.Get(in.Kind)
	if !ok {
		return CheckedSite{}, invalid("unknown kind %s; this deployment serves: %s", toolerr.Quote(in.Kind), strings.Join(s.deps.Registry.Kinds(), ", "))
	}
	if err := sites.ValidateDisplayName(in.DisplayName); err != nil {
		return CheckedSite{}, validationError(err)
	}
	rules := conn.SiteRules()
	baseURL, err := s.normalizeBaseURL(rules, in.BaseURL)
	if err != nil {
		return CheckedSite{}, err
	}
	if err := s.checkERPAddress(ctx, baseURL); err != nil {
		return CheckedSite{}, err
	}
	settings, err := normalizeSettings(conn, nullToNil(in.Settings))
	if err != nil {
		return CheckedSite{}, err
	}
	return CheckedSite{Kind: in.Kind, DisplayName: in.DisplayName, BaseURL: baseURL, Settings: settings,
		IdentityKey: rules.IdentityOf(settings), IdentityName: rules.IdentityName, rules: rules}, nil
}

// UpdateSite changes site's display name, base URL, settings or status by
// the same rules as CreateSite. The audit event keeps the old and new
// values of what changed.
//
// An ERP administrator (the site's owner) may pause and resume the site,
// but may not enable, change or delete one the operator disabled: that is
// the operator's decision, recorded with the status.
func (s *Service) UpdateSite(ctx context.Context, actor Actor, site sites.Site, change SiteChange) (sites.Site, error) {
	updated, err := s.updateSite(ctx, partyOf(actor), site, change)
	var details map[string]any
	if err == nil {
		details = changes(site, updated)
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionUpdateSite, details, err)
	return updated, err
}

// changes lists, for the audit event, each attribute that differs between
// before and after as {"old":..., "new":...}.
func changes(before, after sites.Site) map[string]any {
	out := map[string]any{}
	add := func(name string, old, new any, same bool) {
		if !same {
			out[name] = map[string]any{"old": old, "new": new}
		}
	}
	add("display_name", before.DisplayName, after.DisplayName, before.DisplayName == after.DisplayName)
	add("base_url", before.BaseURL, after.BaseURL, before.BaseURL == after.BaseURL)
	add("status", before.Status, after.Status, before.Status == after.Status)
	add("settings", before.Settings, after.Settings, jsonEqual(before.Settings, after.Settings))
	add("shared_callback", before.SharedCallback, after.SharedCallback, before.SharedCallback == after.SharedCallback)
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// partyOf is who actor is to a site: its owner when an ERP administrator,
// its operator otherwise.
func partyOf(actor Actor) sites.Party {
	if actor.Kind == ActorERPAdmin {
		return sites.ByOwner
	}
	return sites.ByOperator
}

// OperatorDisabled reports whether the operator disabled site, which its
// owner then can neither enable, change nor delete.
func OperatorDisabled(site sites.Site) bool {
	return site.Status == sites.StatusDisabled && site.DisabledBy == sites.ByOperator
}

// operatorDisabled is the owner's refusal of what the operator's disable
// forbids them, in their words.
func operatorDisabled(err error, what string) *Error {
	return newError(Conflict, err, "your erpgate operator disabled this site, so %s", what)
}

// ownerRefused refuses actor a change to site, saying what cannot be
// done in words that follow "so", when actor is the site's owner and the
// operator disabled it: while it is disabled nothing of it is the owner's
// to change, its credentials and service tokens included. It is nil
// otherwise. Revoking (a service token, a person) takes access away, and
// stays the owner's to do.
func ownerRefused(actor Actor, site sites.Site, what string) error {
	if partyOf(actor) == sites.ByOwner && OperatorDisabled(site) {
		return operatorDisabled(sites.ErrOperatorDisabled, what)
	}
	return nil
}

func (s *Service) updateSite(ctx context.Context, by sites.Party, site sites.Site, change SiteChange) (sites.Site, error) {
	upd := sites.SiteUpdate{By: by}
	if change.DisplayName != nil {
		name := strings.TrimSpace(*change.DisplayName)
		if err := sites.ValidateDisplayName(name); err != nil {
			return sites.Site{}, validationError(err)
		}
		upd.DisplayName = &name
	}
	var rules connector.SiteRules
	raw := nullToNil(change.Settings)
	if change.BaseURL != nil || raw != nil {
		conn, err := s.connectorOf(site)
		if err != nil {
			return sites.Site{}, err
		}
		rules = conn.SiteRules()
		if change.BaseURL != nil {
			baseURL, err := s.normalizeBaseURL(rules, *change.BaseURL)
			if err != nil {
				return sites.Site{}, err
			}
			if err := s.checkERPAddress(ctx, baseURL); err != nil {
				return sites.Site{}, err
			}
			upd.BaseURL = &baseURL
		}
		if raw != nil {
			if upd.Settings, err = normalizeSettings(conn, raw); err != nil {
				return sites.Site{}, err
			}
			key := rules.IdentityOf(upd.Settings)
			upd.IdentityKey = &key
		}
	}
	if change.Status != nil {
		status := sites.Status(*change.Status)
		if !status.Valid() {
			e := invalid("status %s is not valid; use %s or %s", toolerr.Quote(*change.Status), toolerr.Quote(string(sites.StatusActive)), toolerr.Quote(string(sites.StatusDisabled)))
			e.ForPeople = "a site is either active or disabled; nothing was changed"
			return sites.Site{}, e
		}
		upd.Status = &status
	}
	if change.SharedCallback != nil {
		if *change.SharedCallback {
			e := invalid("shared_callback can only be turned off: the shared redirect URI lets another site's ERP send back a code meant for this one")
			e.ForPeople = "a site with its own redirect URI cannot go back to the one sites once shared, which lets another site's ERP send back a sign-in meant for this one; nothing was changed"
			return sites.Site{}, e
		}
		upd.OwnCallback = true
	}
	updated, err := s.deps.Store.UpdateSite(ctx, site.ID, upd)
	if errors.Is(err, sites.ErrOperatorDisabled) {
		if change.Status != nil {
			return sites.Site{}, operatorDisabled(err, "only they can enable it again; nothing was changed")
		}
		return sites.Site{}, operatorDisabled(err, "it cannot be changed until they enable it again; nothing was changed")
	}
	if err != nil {
		baseURL := site.BaseURL
		if upd.BaseURL != nil {
			baseURL = *upd.BaseURL
		}
		return sites.Site{}, siteWriteError(err, site.Slug, baseURL, rules)
	}
	return updated, nil
}

// DeleteSite removes site with its connections, tokens and grants. Its
// owner may not delete it while the operator has it disabled: they could
// then register its address again, as a new, active site.
func (s *Service) DeleteSite(ctx context.Context, actor Actor, site sites.Site) error {
	var err error
	if partyOf(actor) == sites.ByOwner {
		err = s.deps.Store.DeleteSiteByOwner(ctx, site.ID)
	} else {
		err = s.deps.Store.DeleteSite(ctx, site.ID)
	}
	switch {
	case errors.Is(err, sites.ErrOperatorDisabled):
		err = operatorDisabled(err, "it cannot be deleted until they enable it again; nothing was deleted")
	case errors.Is(err, sites.ErrNotFound):
		err = newError(NotFound, err, "site %s does not exist", toolerr.Quote(site.Slug))
	case err != nil:
		err = internal(err)
	}
	s.record(ctx, actor, site.ID, site.Slug, ActionDeleteSite, map[string]any{"kind": site.Kind, "base_url": site.BaseURL}, err)
	return err
}

// normalizeSettings checks that raw (nil for none) is a JSON object and
// runs it through the connector's NormalizeSettings.
func normalizeSettings(conn connector.Connector, raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		raw = json.RawMessage(`{}`)
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		e := invalid("settings must be a JSON object")
		e.ForPeople = "the settings were not given as a list of settings and their values; nothing was changed"
		return nil, e
	}
	normalized, err := conn.NormalizeSettings(raw)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.InvalidArgument {
			// A refusal of no one setting (an unknown one, not an object)
			// is the settings', in a phrase after their label.
			e := &Error{Kind: Invalid, Message: "settings: " + te.Message, Err: err,
				Field: "settings", Problem: "are not valid for " + siteOfKind(conn.Kind())}
			if se := (*connector.SettingError)(nil); errors.As(err, &se) {
				e.Field, e.Problem = "settings."+se.Key, se.Problem
			}
			return nil, e
		}
		return nil, internal(fmt.Errorf("siteadmin: normalize %s settings: %w", conn.Kind(), err))
	}
	var v any
	if err := json.Unmarshal(normalized, &v); err != nil {
		return nil, internal(fmt.Errorf("siteadmin: normalized %s settings are not JSON: %w", conn.Kind(), err))
	}
	if hasNUL(v) {
		// Postgres keeps settings as jsonb, which cannot hold a NUL.
		return nil, invalid("settings must not contain NUL characters")
	}
	return normalized, nil
}

// hasNUL reports whether a decoded JSON value has a NUL in a key or string.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case []any:
		return slices.ContainsFunc(x, hasNUL)
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// normalizeBaseURL checks a base URL by the connector's rules: an origin,
// or an origin and a virtual directory for a connector that accepts a
// path.
func (s *Service) normalizeBaseURL(rules connector.SiteRules, raw string) (string, error) {
	normalize := sites.NormalizeBaseURL
	if rules.BaseURLPath {
		normalize = sites.NormalizeBaseURLPath
	}
	baseURL, err := normalize(raw, s.deps.IsDevHost)
	if err != nil {
		return "", validationError(err)
	}
	return baseURL, nil
}

// siteWriteError maps the store's errors for a site write.
func siteWriteError(err error, slug, baseURL string, rules connector.SiteRules) error {
	switch {
	case errors.Is(err, sites.ErrSlugTaken):
		e := newError(Conflict, err, "slug %s is already in use", toolerr.Quote(slug))
		e.Field, e.Problem = "slug", "is already in use; choose another"
		return e
	case errors.Is(err, sites.ErrBaseURLTaken):
		if rules.IdentityName == "" {
			return newError(Conflict, err, "a site for %s is already registered", baseURL)
		}
		return newError(Conflict, err, "a site for %s with the same %s is already registered", baseURL, rules.IdentityName)
	case errors.Is(err, sites.ErrConnectionsExist):
		e := newError(Conflict, err, "site %s has connections whose credentials were verified for its current base URL; delete them before changing base_url, then add them again", toolerr.Quote(slug))
		e.ForPeople = "the site's address cannot change while it has an OAuth client or a fixed API credential checked at its current address: they are removed first, and set again after; nothing was changed"
		return e
	case errors.Is(err, sites.ErrAPICredentialExists):
		e := newError(Conflict, err, "site %s has an API credential of its current tenant; delete it before moving the site to another tenant, then add the new tenant's", toolerr.Quote(slug))
		// The owner's page sets the credential but cannot remove it.
		e.ForPeople = "the site's fixed API credential is its current tenant's, so the site cannot move to another tenant while it is set: ask your erpgate operator to remove the credential, then change the tenant and set the new tenant's credential; nothing was changed"
		e.asksOperator = true
		return e
	case errors.Is(err, sites.ErrNotFound):
		return newError(NotFound, err, "site %s does not exist", toolerr.Quote(slug))
	}
	return storeError(err)
}

// PrivateHostsHint tells an operator how to allow an ERP on a private
// network.
const PrivateHostsHint = "erpgate reaches ERPs only at public addresses, except hosts listed in ERPGATE_ERP_PRIVATE_HOSTS (host for port 443, host:port for another)"

// privateHostsAsk is PrivateHostsHint for someone who is not the operator
// (a person registering a site, a site's owner), who cannot set
// ERPGATE_ERP_PRIVATE_HOSTS.
const privateHostsAsk = "erpgate reaches ERPs only at public addresses; if your ERP is on a private network, the operator of this erpgate can allow its address"

// privateAddress is the refusal of an ERP at a non-public address
// (forbidden says which) for someone who is not the operator. An address
// typed as one is named with its kind; a host name is refused as
// noPublicAddress has it, saying neither what it resolves to nor whether
// it resolves: anyone may start a registration, and what erpgate's
// resolver answers for an internal name maps erpgate's own network.
func privateAddress(baseURL string, forbidden error) string {
	if u, err := url.Parse(baseURL); err == nil && net.ParseIP(u.Hostname()) == nil {
		return noPublicAddress(u.Hostname())
	}
	return fmt.Sprintf("the ERP's address %s is not public (%s): %s", baseURL, forbidden, privateHostsAsk)
}

// noPublicAddress is the refusal, for someone who is not the operator, of
// a host name that does not resolve or resolves to a non-public address:
// the same words for both.
func noPublicAddress(host string) string {
	return fmt.Sprintf("the host name %s has no public address erpgate can reach: check the ERP's address. %s", host, privateHostsAsk)
}

// checkERPAddress refuses a base URL (a normalised origin) whose host is
// not allowed by the ERP address policy: in production, one that resolves
// to a loopback, private, link-local or other non-public address and is
// not listed. The dial-time check in the outbound transport still applies
// later, so a name that rebinds is refused then.
func (s *Service) checkERPAddress(ctx context.Context, baseURL string) error {
	if s.deps.ERPAddresses == nil {
		return nil
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return internal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = s.deps.ERPAddresses.CheckHost(ctx, nil, netguard.URLHostPort(u))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, netguard.ErrUnresolved):
		e := invalid("base URL %s: the host name %s does not resolve, so erpgate cannot check that its address is public; %s", baseURL, u.Hostname(), PrivateHostsHint)
		e.ForPeople = noPublicAddress(u.Hostname())
		e.asksOperator = true
		return e
	case errors.Is(err, netguard.ErrForbiddenAddress):
		e := invalid("base URL %s: %s; %s: for this ERP, list %s", baseURL, err, PrivateHostsHint, netguard.Listing(u))
		e.ForPeople = privateAddress(baseURL, err)
		e.asksOperator = true
		return e
	}
	return internal(err)
}

// validationError turns a *sites.ValidationError into an Invalid error.
func validationError(err error) error {
	var ve *sites.ValidationError
	if errors.As(err, &ve) {
		return &Error{Kind: Invalid, Message: ve.Message, Field: ve.Field, Problem: ve.Problem}
	}
	return internal(err)
}

// nullToNil treats a JSON null as absent.
func nullToNil(raw json.RawMessage) json.RawMessage {
	if raw == nil || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

// Reachable asks the ERP at a checked site's address, without
// credentials, through the outbound transport, whether it answers as an
// ERP of its kind: the connector's KindProbe, or any HTTP answer for a
// kind without one. It reports Unreachable (or Invalid, for an address the
// transport refuses) in the person's words, so that a registration does
// not send a browser to an address that answers nothing, or answers as
// something else.
func (s *Service) Reachable(ctx context.Context, checked CheckedSite) error {
	return s.reachable(ctx, checked.Kind, checked.BaseURL, checked.Settings)
}

// SiteReachable is Reachable for a registered site: the owner's sign-in
// asks it before it sends a browser to the ERP.
func (s *Service) SiteReachable(ctx context.Context, site sites.Site) error {
	return s.reachable(ctx, site.Kind, site.BaseURL, site.Settings)
}

func (s *Service) reachable(ctx context.Context, kind, baseURL string, settings json.RawMessage) error {
	u, err := url.Parse(baseURL)
	if err != nil {
		return internal(err)
	}
	csite := connector.Site{Kind: kind, BaseURL: u, Settings: settings}
	ctx, cancel := context.WithTimeout(ctx, VerifyTimeout)
	defer cancel()
	hc := s.deps.HTTPClient(csite, nil)
	if conn, ok := s.deps.Registry.Get(kind); ok {
		if probe, ok := conn.(connector.KindProbe); ok {
			err = probe.ProbeKind(ctx, csite, hc)
			if te := (*toolerr.Error)(nil); errors.As(err, &te) && te.Code == toolerr.UpstreamInvalidResponse {
				return &Error{Kind: Unreachable, Err: err,
					Message:   fmt.Sprintf("the ERP at %s does not answer as %s (%s)", baseURL, siteOfKind(kind), te.Message),
					ForPeople: fmt.Sprintf("the address %s does not answer as %s", baseURL, KindName(kind))}
			}
			return reachError(baseURL, kind, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, csite.URL("/", nil), nil)
	if err != nil {
		return internal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reachError(baseURL, kind, err)
	}
	_ = resp.Body.Close()
	return nil
}

// reachError is a failure to ask the ERP at baseURL, in the person's
// words; nil for none.
func reachError(baseURL, kind string, err error) error {
	if err == nil {
		return nil
	}
	if kind, reason, people, ok := unreachableReason(baseURL, kind, err); ok {
		// Invalid: an address that is not public, which only the
		// operator can allow.
		return &Error{Kind: kind, Message: reason, ForPeople: people, Err: err, asksOperator: kind == Invalid}
	}
	return internal(err)
}
