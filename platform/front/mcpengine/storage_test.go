package mcpengine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/inmemory"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// cachingERP is a connector whose one tool writes and reads its site's
// cache, to show which cache a call gets.
type cachingERP struct{}

func (cachingERP) Kind() string                                                   { return "cachingerp" }
func (cachingERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) { return raw, nil }
func (cachingERP) APICredentialFields() []connector.CredentialField               { return nil }
func (cachingERP) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, nil
}
func (cachingERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "bot", nil
}
func (cachingERP) Tools() []connector.Tool {
	return []connector.Tool{{
		Name: "remember", Description: "Test tool.", Input: schema.Object(), Effect: connector.Read,
		Output: schema.Object(schema.Prop("value", schema.Any(""))),
		Handler: func(ctx context.Context, c *connector.Call) (any, error) {
			if c.Cache == nil || c.Index == nil {
				return map[string]any{"value": "no storage"}, nil
			}
			prev, _, _ := c.Cache.Get(ctx, "k")
			if err := c.Cache.Set(ctx, "k", []byte(c.Site.Slug), time.Hour); err != nil {
				return nil, err
			}
			return map[string]any{"value": string(prev)}, nil
		},
	}}
}

// With Options.Storage each call gets its own site's cache and index;
// without it, none.
func TestCallsGetTheirSitesStorage(t *testing.T) {
	reg := connector.NewRegistry()
	reg.MustRegister(cachingERP{})
	storage := inmemory.NewSiteStorage(nil)
	base, _ := url.Parse("https://erp.example")
	serve := func(e *Engine, slug string) string {
		site := connector.Site{ID: uuid.NewSHA1(uuid.NameSpaceURL, []byte(slug)), Slug: slug, Kind: "cachingerp", BaseURL: base}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}})
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	with, err := New(Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{}, Storage: storage})
	if err != nil {
		t.Fatal(err)
	}
	without, err := New(Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := &fixture{url: serve(with, "a")}, &fixture{url: serve(with, "b")}
	if _, m := call(t, a.session(t), "remember", nil); m["value"] != "" {
		t.Fatalf("first call saw %v", m["value"])
	}
	if _, m := call(t, a.session(t), "remember", nil); m["value"] != "a" {
		t.Fatalf("second call on site a saw %v", m["value"])
	}
	if _, m := call(t, b.session(t), "remember", nil); m["value"] != "" {
		t.Fatalf("site b saw site a's cache: %v", m["value"])
	}
	if _, m := call(t, (&fixture{url: serve(without, "a")}).session(t), "remember", nil); m["value"] != "no storage" {
		t.Fatalf("without storage: %v", m["value"])
	}
}

func (cachingERP) SiteRules() connector.SiteRules { return connector.SiteRules{} }
