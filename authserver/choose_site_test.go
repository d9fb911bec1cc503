package authserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// dbERP is an ERP with user sign-in whose instance serves several
// databases at one address, possibly under a virtual directory: its sites
// are told apart by the database setting. Its settings may also carry a
// "tenant" that means nothing to it.
type dbERP struct{}

func (dbERP) Kind() string            { return "dberp" }
func (dbERP) Tools() []connector.Tool { return nil }
func (dbERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	return raw, nil
}
func (dbERP) APICredentialFields() []connector.CredentialField { return nil }
func (dbERP) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, nil
}
func (dbERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "", nil
}
func (dbERP) SiteRules() connector.SiteRules {
	return connector.SiteRules{BaseURLPath: true, IdentityName: "database", Identity: func(settings json.RawMessage) string {
		var s map[string]string
		_ = json.Unmarshal(settings, &s)
		return s["database"]
	}}
}
func (dbERP) AuthorizationURL(connector.Site, connector.OAuthClient, connector.AuthorizationRequest) (string, error) {
	return "", nil
}
func (dbERP) ExchangeCode(context.Context, connector.Site, connector.OAuthClient, *http.Client, string, string, string) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, nil
}
func (dbERP) RefreshToken(context.Context, connector.Site, connector.OAuthClient, *http.Client, secrets.Secret) (connector.UpstreamToken, error) {
	return connector.UpstreamToken{}, nil
}
func (dbERP) Identify(context.Context, connector.Site, *http.Client) (connector.UpstreamUser, error) {
	return connector.UpstreamUser{}, nil
}
func (dbERP) TokenAuthorizer(secrets.Secret) connector.Authorizer { return nil }

// TestChooseSiteByAddressAndIdentity: the /mcp address page matches what a
// user typed to a site by its origin and virtual directory (the deepest
// that the typed path is under, without regard to case), then by the
// identity its connector declares, not by a setting called tenant.
func TestChooseSiteByAddressAndIdentity(t *testing.T) {
	ctx := t.Context()
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	store := sites.NewStore(pgtest.NewPool(t), keys)
	reg := connector.NewRegistry()
	reg.MustRegister(dbERP{})
	rules := dbERP{}.SiteRules()
	add := func(slug, baseURL, settings string, signIn bool) {
		t.Helper()
		site, err := store.CreateSite(ctx, sites.NewSite{Slug: slug, Kind: "dberp", DisplayName: slug, BaseURL: baseURL,
			Settings: json.RawMessage(settings), IdentityKey: rules.IdentityOf(json.RawMessage(settings))})
		if err != nil {
			t.Fatalf("create %s: %v", slug, err)
		}
		if signIn {
			if _, err := store.PutConnection(ctx, site.ID, sites.ConnectionOAuth, "", map[string]secrets.Secret{"client_id": "c", "client_secret": "s"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("sales", "https://db.example.com", `{"database":"sales","tenant":"shared"}`, true)
	add("stock", "https://db.example.com", `{"database":"stock","tenant":"shared"}`, true)
	add("erp-sales", "https://erp.example.com/ERP", `{"database":"sales"}`, true)
	add("erp-stock", "https://erp.example.com/ERP", `{"database":"stock"}`, true)
	add("erp-root", "https://erp.example.com", `{"database":"sales"}`, true)
	add("erp-deep", "https://erp.example.com/ERP/Deep", `{"database":"sales"}`, false)
	srv := &Server{deps: Deps{Sites: store, Registry: reg}}

	for _, c := range []struct {
		typed, identity string
		want            []string
	}{
		{"https://db.example.com/app/home", "", []string{"sales", "stock"}},
		{"https://db.example.com", "STOCK", []string{"stock"}},
		{"db.example.com", "shared", nil}, // a tenant setting is not dberp's identity
		{"https://erp.example.com/erp/Main?ScreenId=AR303000", "", []string{"erp-sales", "erp-stock"}},
		{"https://erp.example.com/ERP", "stock", []string{"erp-stock"}},
		{"https://erp.example.com/ERP/Deep/Main", "sales", []string{"erp-sales"}}, // the deeper site offers no sign-in
		{"https://erp.example.com/ERPX/Main", "", []string{"erp-root"}},
		{"erp.example.com", "", []string{"erp-root"}},
		{"https://erp.example.com:8443/ERP", "", nil},
	} {
		origin, path, err := typedAddress(c.typed, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.typed, err)
		}
		matches, err := srv.sitesAtAddress(ctx, origin, path, c.identity)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range matches {
			got = append(got, m.site.Slug)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s with identity %q matched %v, want %v", c.typed, c.identity, got, c.want)
		}
	}
}
