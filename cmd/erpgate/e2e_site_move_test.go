package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	authstorage "github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestMovedSiteSendsNoOldERPTokens: a site whose people signed in at one
// ERP is moved to another address (its connections removed, its base URL
// changed, the new ERP's OAuth client added). The people's tokens from the
// old ERP are credentials of that ERP: not one may reach the new address,
// neither the access token on a call nor the refresh token at its token
// endpoint. The person signs in again at the new ERP instead.
func TestMovedSiteSendsNoOldERPTokens(t *testing.T) {
	oldERP := frappetest.NewServer(frappetest.Options{})
	defer oldERP.Close()
	newERP := frappetest.NewServer(frappetest.Options{})
	defer newERP.Close()
	// The new address records everything it is sent.
	var (
		mu   sync.Mutex
		sent []string
	)
	target, _ := url.Parse(newERP.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, r.URL.String()+"\n"+r.Header.Get("Authorization")+"\n"+string(body))
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	gw := startGateway(t, "", nil)
	site := frappeOAuthSite(t, gw, "acme", oldERP)
	alex := userWithRole(t, oldERP, "all-companies")
	client := connectOAuth(t, site.MCPURL, frappeLogin(alex))
	mustSucceed(t, callTool(t, client.cs, "get_current_user", nil), "get_current_user at the old ERP")

	ctx := context.Background()
	pool, err := pgxpool.New(ctx, gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	keys, err := secrets.ParseKeyring(gw.Keys)
	if err != nil {
		t.Fatal(err)
	}
	old, err := authstorage.New(pool, keys, authstorage.Options{}).UpstreamToken(ctx, uuid.MustParse(site.ID), alex.Email)
	if err != nil {
		t.Fatal(err)
	}

	// The operator moves the site.
	for _, typ := range []string{"api_token", "oauth"} {
		if err := gw.admin.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/connections/"+typ, nil, nil); err != nil {
			t.Fatalf("delete the %s connection: %v", typ, err)
		}
	}
	if err := gw.admin.do(ctx, http.MethodPatch, "/sites/"+site.ID, map[string]any{"base_url": front.URL}, nil); err != nil {
		t.Fatalf("move the site: %v", err)
	}
	moved := newERP.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(ctx, site.ID, moved.ID, moved.Secret); err != nil {
		t.Fatal(err)
	}

	after := callTool(t, client.cs, "get_current_user", nil)
	expireUpstreamTokens(t, gw.DBURL)
	again := callTool(t, client.cs, "get_current_user", nil)

	mu.Lock()
	for _, r := range sent {
		if strings.Contains(r, old.Access.Reveal()) {
			t.Errorf("the new address was sent the old ERP's access token:\n%s", r)
		}
		if strings.Contains(r, old.Refresh.Reveal()) {
			t.Errorf("the new address was sent the old ERP's refresh token:\n%s", r)
		}
	}
	mu.Unlock()
	// The client was asked to sign in again, at the new ERP, and went on
	// there; the refresh later was the new ERP's too.
	out := mustSucceed(t, after, "get_current_user after the move")
	if site, _ := out["site"].(map[string]any); site["url"] != front.URL {
		t.Errorf("get_current_user after the move = %v", out)
	}
	if client.browser.runs != 2 {
		t.Errorf("signed in %d times, want 2", client.browser.runs)
	}
	mustSucceed(t, again, "get_current_user after a refresh at the new ERP")
}
