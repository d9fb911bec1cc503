package siteadmin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The one credential the test ERP accepts, and who it authenticates as.
const (
	goodKey    = "key-4e1b"
	goodSecret = "secret-value-c0ffee"
	identity   = "admin@acme.example"
)

// testERP is a connector of kind "testerp" shaped like Frappe: an
// api_key/api_secret credential verified by asking the ERP who is logged
// in, and a "company" setting that is also the site's identity.
type testERP struct{}

func (testERP) Kind() string            { return "testerp" }
func (testERP) Tools() []connector.Tool { return nil }

func (testERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "settings must be a JSON object")
	}
	out := map[string]string{"company": ""}
	for k, v := range in {
		s, ok := v.(string)
		if _, known := out[k]; !known || !ok {
			return nil, toolerr.New(toolerr.InvalidArgument, "unknown setting %q", k)
		}
		out[k] = s
	}
	return json.Marshal(out)
}

func (testERP) SiteRules() connector.SiteRules {
	return connector.SiteRules{IdentityName: "company", Identity: func(settings json.RawMessage) string {
		var s map[string]string
		_ = json.Unmarshal(settings, &s)
		return s["company"]
	}}
}

func (testERP) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{{Name: "api_key", Secret: true}, {Name: "api_secret", Secret: true}}
}

func (testERP) APIAuthorizer(_ connector.Site, fields map[string]secrets.Secret) (connector.Authorizer, error) {
	header := "token " + fields["api_key"].Reveal() + ":" + fields["api_secret"].Reveal()
	return connector.AuthorizerFunc(func(req *http.Request) error {
		req.Header.Set("Authorization", header)
		return nil
	}), nil
}

func (testERP) VerifyAPICredential(ctx context.Context, site connector.Site, client *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/api/method/frappe.auth.get_logged_user", nil), nil)
	if err != nil {
		return "", toolerr.Wrap(toolerr.Internal, err, "could not build the request")
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", toolerr.Wrap(toolerr.UpstreamUnavailable, err, "could not reach the ERP")
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return "", toolerr.New(toolerr.AuthExpired, "the ERP rejected this API key and secret")
	}
	var body struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "the ERP's answer is not JSON")
	}
	return body.Message, nil
}

// fixture is the layer on a fresh database, with the test ERP up.
type fixture struct {
	svc   *siteadmin.Service
	store *sites.Store
	pool  *pgxpool.Pool
	erp   *httptest.Server
}

// withLiveSettings returns a service over the fixture's store whose live
// settings are the deployment's defaults as erpgate ships them (1000
// rows a query, 3 and 40 calls a caller, 10 and 300 a site), loaded from
// the fixture's database, and that settings store.
func (f *fixture) withLiveSettings(t *testing.T) (*siteadmin.Service, *livesettings.Store) {
	t.Helper()
	live := livesettings.New(f.pool, livesettings.Defaults{MaxRecords: 1000, UserConcurrency: 3, UserPerMinute: 40, SiteConcurrency: 10, SitePerMinute: 300}, nil)
	if err := live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	reg.MustRegister(testERP{})
	return siteadmin.New(siteadmin.Deps{Store: f.store, Registry: reg, Settings: live,
		HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }}), live
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	reg := connector.NewRegistry()
	reg.MustRegister(testERP{})
	store := sites.NewStore(pool, keys)
	erp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != fmt.Sprintf("token %s:%s", goodKey, goodSecret) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"message": identity})
	}))
	t.Cleanup(erp.Close)
	client := func(_ connector.Site, auth connector.Authorizer) *http.Client {
		return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			req = req.Clone(req.Context())
			if auth == nil {
				return http.DefaultTransport.RoundTrip(req)
			}
			if err := auth.Authorize(req); err != nil {
				return nil, err
			}
			return http.DefaultTransport.RoundTrip(req)
		})}
	}
	svc := siteadmin.New(siteadmin.Deps{Store: store, Registry: reg, HTTPClient: client})
	return &fixture{svc: svc, store: store, pool: pool, erp: erp}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (f *fixture) create(t *testing.T, slug string) sites.Site {
	t.Helper()
	site, err := f.svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{
		Slug: slug, Kind: "testerp", DisplayName: "Site " + slug, BaseURL: f.erp.URL,
		Settings: json.RawMessage(`{"company":"` + slug + `"}`),
	})
	if err != nil {
		t.Fatalf("create %s: %v", slug, err)
	}
	return site
}

// events returns every recorded event, oldest first.
func (f *fixture) events(t *testing.T) []sites.Event {
	t.Helper()
	rows, err := f.pool.Query(t.Context(), `
		SELECT coalesce(site_id::text, ''), site_slug, actor_kind, actor, action, outcome, reason, details::text
		FROM admin_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sites.Event
	for rows.Next() {
		var (
			e       sites.Event
			id, raw string
		)
		if err := rows.Scan(&id, &e.SiteSlug, &e.ActorKind, &e.Actor, &e.Action, &e.Outcome, &e.Reason, &raw); err != nil {
			t.Fatal(err)
		}
		if id != "" {
			e.SiteID = uuid.MustParse(id)
		}
		if err := json.Unmarshal([]byte(raw), &e.Details); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func kindOf(err error) siteadmin.Kind {
	var se *siteadmin.Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return "not a siteadmin.Error"
}

// Creating a site records who did it and what was registered; a refused
// creation records the refusal and why, and leaves no site.
func TestCreateSiteIsAudited(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")

	_, err := f.svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{
		Slug: "acme2", Kind: "testerp", DisplayName: "Again", BaseURL: f.erp.URL, Settings: json.RawMessage(`{"company":"acme"}`),
	})
	if kindOf(err) != siteadmin.Conflict {
		t.Fatalf("same address and company again: %v, want a conflict", err)
	}
	_, err = f.svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{
		Slug: "bad", Kind: "testerp", DisplayName: "Bad", BaseURL: "ftp://erp.example.com",
	})
	if kindOf(err) != siteadmin.Invalid {
		t.Fatalf("ftp base URL: %v, want invalid", err)
	}
	_, err = f.svc.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "nokind", DisplayName: "x", BaseURL: f.erp.URL})
	var se *siteadmin.Error
	if kindOf(err) != siteadmin.Invalid || !errors.As(err, &se) || !strings.Contains(se.Message, "kind") {
		t.Fatalf("missing kind: %v", err)
	}
	list, err := f.store.ListSites(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("sites = %v, %v; want only acme", list, err)
	}

	ev := f.events(t)
	if len(ev) != 4 {
		t.Fatalf("events = %+v, want 4", ev)
	}
	ok := ev[0]
	if ok.Action != siteadmin.ActionCreateSite || ok.Outcome != "success" || ok.SiteID != site.ID || ok.SiteSlug != "acme" ||
		ok.ActorKind != "operator" || ok.Actor != "admin_token" || ok.Details["base_url"] != f.erp.URL || ok.Reason != "" {
		t.Errorf("success event = %+v", ok)
	}
	if e := ev[1]; e.Outcome != "refused" || e.SiteSlug != "acme2" || e.SiteID != uuid.Nil ||
		e.Reason != "conflict: a site for "+f.erp.URL+" with the same company is already registered" {
		t.Errorf("conflict event = %+v", e)
	}
	if e := ev[2]; e.Outcome != "refused" || !strings.HasPrefix(e.Reason, "invalid_request: ") {
		t.Errorf("invalid event = %+v", e)
	}
}

// An update records the old and new value of each changed attribute, and
// only those; the actor is whoever acted (here an ERP administrator).
func TestUpdateSiteRecordsOldAndNewValues(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")
	name, status := "Acme Ltd", "disabled"
	updated, err := f.svc.UpdateSite(t.Context(), siteadmin.ERPAdmin("admin@acme.example"), site, siteadmin.SiteChange{
		DisplayName: &name, Status: &status, Settings: json.RawMessage(`{"company":"Acme Ltd"}`),
	})
	if err != nil || updated.DisplayName != name || updated.Status != sites.StatusDisabled || updated.IdentityKey != "Acme Ltd" {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	bad := "paused"
	if _, err := f.svc.UpdateSite(t.Context(), siteadmin.Operator, updated, siteadmin.SiteChange{Status: &bad}); kindOf(err) != siteadmin.Invalid {
		t.Fatalf("status paused: %v", err)
	}
	ev := f.events(t)
	if len(ev) != 3 {
		t.Fatalf("events = %+v", ev)
	}
	e := ev[1]
	if e.ActorKind != "erp_admin" || e.Actor != "admin@acme.example" || e.Outcome != "success" {
		t.Fatalf("update event = %+v", e)
	}
	want := map[string]any{
		"display_name": map[string]any{"old": "Site acme", "new": "Acme Ltd"},
		"status":       map[string]any{"old": "active", "new": "disabled"},
		"settings":     map[string]any{"old": map[string]any{"company": "acme"}, "new": map[string]any{"company": "Acme Ltd"}},
	}
	got, _ := json.Marshal(e.Details)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("details = %s, want %s", got, wantJSON)
	}
	if r := ev[2]; r.Outcome != "refused" || !strings.Contains(r.Reason, `status “paused” is not valid`) {
		t.Errorf("refused update event = %+v", r)
	}
}

// A credential is saved only after the ERP accepted it. A wrong secret and
// an unreachable ERP are refused, recorded with the reason, and save
// nothing; no secret reaches the audit table.
func TestPutAPIConnectionVerifiesFirst(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")
	ctx := t.Context()

	_, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": "wrong-secret-77"})
	if kindOf(err) != siteadmin.Rejected {
		t.Fatalf("wrong secret: %v, want rejected", err)
	}
	_, err = f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey})
	var se *siteadmin.Error
	if kindOf(err) != siteadmin.Invalid || !errors.As(err, &se) || !strings.Contains(se.Message, "missing credential field: api_secret") {
		t.Fatalf("missing field: %v", err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	gone, err := f.svc.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: "gone", Kind: "testerp", DisplayName: "Gone", BaseURL: downURL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.PutAPIConnection(ctx, siteadmin.Operator, gone, map[string]string{"api_key": goodKey, "api_secret": goodSecret})
	if kindOf(err) != siteadmin.Unreachable {
		t.Fatalf("unreachable ERP: %v, want unreachable", err)
	}
	if conns, _ := f.store.ListConnections(ctx, site.ID); len(conns) != 0 {
		t.Fatalf("refused credentials were saved: %+v", conns)
	}

	saved, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret})
	if err != nil || saved.VerifiedIdentity != identity {
		t.Fatalf("good credential: %+v, %v", saved, err)
	}

	var puts []sites.Event
	for _, e := range f.events(t) {
		if e.Action == siteadmin.ActionPutAPIConnection {
			puts = append(puts, e)
		}
	}
	if len(puts) != 4 {
		t.Fatalf("put events = %+v", puts)
	}
	if e := puts[0]; e.Outcome != "refused" || e.Reason != "credential_rejected: the ERP rejected this API key and secret; nothing was saved" {
		t.Errorf("rejected event = %+v", e)
	}
	if e := puts[2]; e.Outcome != "refused" || e.SiteSlug != "gone" || !strings.HasPrefix(e.Reason, "upstream_unreachable: could not verify the credential: the ERP at "+downURL+" could not be reached") {
		t.Errorf("unreachable event = %+v", e)
	}
	if e := puts[3]; e.Outcome != "success" || e.Details["verified_identity"] != identity {
		t.Errorf("success event = %+v", e)
	}
	var all string
	if err := f.pool.QueryRow(ctx, `SELECT string_agg(reason || details::text, ' ') FROM admin_events`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{goodSecret, "wrong-secret-77", goodKey} {
		if strings.Contains(all, secret) {
			t.Errorf("the audit table holds the credential value %q", secret)
		}
	}
}

// Service tokens need the API connection; issue and revoke are audited
// with the token's id, never its value.
func TestServiceTokensAreAudited(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")
	ctx := t.Context()
	_, _, err := f.svc.IssueServiceToken(ctx, siteadmin.Operator, site, "agent", 0)
	if kindOf(err) != siteadmin.Conflict || !errors.Is(err, sites.ErrNoAPIConnection) {
		t.Fatalf("token without connection: %v", err)
	}
	if _, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret}); err != nil {
		t.Fatal(err)
	}
	st, value, err := f.svc.IssueServiceToken(ctx, siteadmin.Operator, site, "agent", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RevokeServiceToken(ctx, siteadmin.Operator, site, st.ID, st.ID.String()); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.RevokeServiceToken(ctx, siteadmin.Operator, site, uuid.Nil, "nonsense"); kindOf(err) != siteadmin.NotFound {
		t.Fatalf("revoke unknown: %v", err)
	}
	var got []string
	for _, e := range f.events(t) {
		if strings.Contains(e.Action, "service_token") {
			got = append(got, e.Action+" "+e.Outcome+" "+fmt.Sprint(e.Details["token_id"]))
		}
		raw, _ := json.Marshal(e)
		if strings.Contains(string(raw), value.Reveal()) {
			t.Errorf("event %s holds the token value", e.Action)
		}
	}
	want := []string{
		"issue_service_token refused <nil>",
		"issue_service_token success " + st.ID.String(),
		"revoke_service_token success " + st.ID.String(),
		"revoke_service_token refused nonsense",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("token events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Deleting a site is recorded, and its events outlive it.
func TestDeleteSiteEventsOutliveTheSite(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")
	if err := f.svc.DeleteSite(t.Context(), siteadmin.Operator, site); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DeleteSite(t.Context(), siteadmin.Operator, site); kindOf(err) != siteadmin.NotFound {
		t.Fatalf("second delete: %v", err)
	}
	ev, err := f.store.ListEvents(t.Context(), site.ID, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 3 || ev[0].Action != siteadmin.ActionDeleteSite || ev[0].Outcome != "refused" || ev[1].Outcome != "success" || ev[2].Action != siteadmin.ActionCreateSite {
		t.Fatalf("events of the deleted site, newest first = %+v", ev)
	}
}

// testOAuthERP is testERP with user sign-in (kind "testoauth"); the layer
// never calls these methods, it only needs the kind to support sign-in.
type testOAuthERP struct{ testERP }

func (testOAuthERP) Kind() string { return "testoauth" }
func (testOAuthERP) AuthorizationURL(connector.Site, connector.OAuthClient, connector.AuthorizationRequest) (string, error) {
	return "", errors.New("not used")
}
func (testOAuthERP) ExchangeCode(context.Context, connector.Site, connector.OAuthClient, *http.Client, string, string, string) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, errors.New("not used")
}
func (testOAuthERP) RefreshToken(context.Context, connector.Site, connector.OAuthClient, *http.Client, secrets.Secret) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, errors.New("not used")
}
func (testOAuthERP) Identify(context.Context, connector.Site, *http.Client) (connector.UpstreamUser, error) {
	return connector.UpstreamUser{}, errors.New("not used")
}
func (testOAuthERP) TokenAuthorizer(secrets.Secret) connector.Authorizer { return nil }

// Rotating the OAuth client secret keeps the client id, needs a client to
// rotate, and never records either secret.
func TestRotateOAuthClientSecret(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	site := f.create(t, "acme")
	if _, err := f.svc.PutOAuthConnection(ctx, siteadmin.Operator, site, map[string]string{"client_id": "c1", "client_secret": "first-secret-1"}); kindOf(err) != siteadmin.Invalid {
		t.Fatalf("OAuth client on a kind without sign-in: %v, want invalid", err)
	}
	reg := connector.NewRegistry()
	reg.MustRegister(testOAuthERP{})
	svc := siteadmin.New(siteadmin.Deps{Store: f.store, Registry: reg, HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }})
	oauthSite, err := svc.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: "signin", Kind: "testoauth", DisplayName: "Sign-in", BaseURL: f.erp.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RotateOAuthClientSecret(ctx, siteadmin.ERPAdmin("admin@acme.example"), oauthSite, "second-secret-2"); kindOf(err) != siteadmin.Conflict {
		t.Fatalf("rotate without a client: %v, want conflict", err)
	}
	if _, err := svc.PutOAuthConnection(ctx, siteadmin.Operator, oauthSite, map[string]string{"client_id": "c1", "client_secret": "first-secret-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RotateOAuthClientSecret(ctx, siteadmin.ERPAdmin("admin@acme.example"), oauthSite, "  "); kindOf(err) != siteadmin.Invalid {
		t.Fatalf("blank secret: %v, want invalid", err)
	}
	if _, err := svc.RotateOAuthClientSecret(ctx, siteadmin.ERPAdmin("admin@acme.example"), oauthSite, " second-secret-2 "); err != nil {
		t.Fatal(err)
	}
	_, fields, err := f.store.GetConnection(ctx, oauthSite.ID, sites.ConnectionOAuth)
	if err != nil || fields["client_id"].Reveal() != "c1" || fields["client_secret"].Reveal() != "second-secret-2" {
		t.Fatalf("after rotation: client %q, %v", fields["client_id"].Reveal(), err)
	}
	var outcomes []string
	for _, e := range f.events(t) {
		if e.Action == siteadmin.ActionRotateOAuthSecret {
			outcomes = append(outcomes, e.Outcome+" "+e.Actor+" "+fmt.Sprint(e.Details["client_id"]))
		}
		raw, _ := json.Marshal(e)
		if strings.Contains(string(raw), "first-secret-1") || strings.Contains(string(raw), "second-secret-2") {
			t.Errorf("event %s holds a client secret", e.Action)
		}
	}
	want := "refused admin@acme.example <nil>\nrefused admin@acme.example <nil>\nsuccess admin@acme.example c1"
	if strings.Join(outcomes, "\n") != want {
		t.Errorf("rotation events:\n%s\nwant:\n%s", strings.Join(outcomes, "\n"), want)
	}
}

// While the operator has a site disabled, its owner cannot move it to
// another identity (then register the old one again as a new site) or
// delete it (then register it again): each is refused, in a sentence
// saying why, and recorded.
func TestOwnerCannotEscapeOperatorDisable(t *testing.T) {
	f := newFixture(t)
	site := f.create(t, "acme")
	disabled := "disabled"
	site, err := f.svc.UpdateSite(t.Context(), siteadmin.Operator, site, siteadmin.SiteChange{Status: &disabled})
	if err != nil || site.DisabledBy != sites.ByOperator {
		t.Fatalf("the operator disables: %+v, %v", site, err)
	}
	owner := siteadmin.ERPAdmin("admin@acme.example")
	_, err = f.svc.UpdateSite(t.Context(), owner, site, siteadmin.SiteChange{Settings: json.RawMessage(`{"company":"elsewhere"}`)})
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Conflict || se.Message != "your erpgate operator disabled this site, so it cannot be changed until they enable it again; nothing was changed" {
		t.Errorf("the owner moves the site: %v", err)
	}
	if err := f.svc.DeleteSite(t.Context(), owner, site); !errors.As(err, &se) || se.Kind != siteadmin.Conflict ||
		se.Message != "your erpgate operator disabled this site, so it cannot be deleted until they enable it again; nothing was deleted" {
		t.Errorf("the owner deletes the site: %v", err)
	}
	if got, err := f.store.GetSite(t.Context(), site.ID); err != nil || got.IdentityKey != "acme" || got.DisabledBy != sites.ByOperator {
		t.Errorf("after the owner's attempts: %+v, %v", got, err)
	}
	ev := f.events(t)
	if n := len(ev); n != 4 || ev[2].Outcome != "refused" || ev[3].Action != siteadmin.ActionDeleteSite || ev[3].Outcome != "refused" || ev[3].ActorKind != "erp_admin" {
		t.Errorf("events = %+v", ev)
	}
	if err := f.svc.DeleteSite(t.Context(), siteadmin.Operator, site); err != nil {
		t.Errorf("the operator deletes the site: %v", err)
	}
}
