package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"
)

type peopleResponse struct {
	People []struct {
		ERPUser     string    `json:"erp_user"`
		FirstUsedAt time.Time `json:"first_used_at"`
		LastUsedAt  time.Time `json:"last_used_at"`
		Clients     []struct {
			ClientID   string `json:"client_id"`
			ClientName string `json:"client_name"`
		} `json:"clients"`
	} `json:"people"`
}

// A real OAuth sign-in through the Frappe simulator shows up in the site's
// people listing; revoking that person makes their MCP client's next
// request 401 at once, leaves the other person signed in, and is recorded
// in admin_events.
func TestPeopleSeeAndRevokeARealSignIn(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	all, nz := userWithRole(t, sim, "all-companies"), userWithRole(t, sim, "one-company")
	alex := connectOAuth(t, site.MCPURL, frappeLogin(all))
	ngaio := connectOAuth(t, site.MCPURL, frappeLogin(nz))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var people peopleResponse
	if err := gw.admin.do(ctx, http.MethodGet, "/sites/acme/people", nil, &people); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range people.People {
		seen[p.ERPUser] = true
		if len(p.Clients) != 1 || p.Clients[0].ClientName != "erpgate e2e client" || p.FirstUsedAt.IsZero() || p.LastUsedAt.Before(p.FirstUsedAt) {
			t.Errorf("person %+v", p)
		}
	}
	if len(people.People) != 2 || !seen[all.Email] || !seen[nz.Email] {
		t.Fatalf("people = %+v, want %s and %s", people.People, all.Email, nz.Email)
	}

	token := alex.source.current().AccessToken
	if resp := rawMCP(t, site.MCPURL, token); resp.StatusCode != http.StatusOK {
		t.Fatalf("before revocation: HTTP %d", resp.StatusCode)
	}
	if err := gw.admin.do(ctx, http.MethodDelete, "/sites/acme/people/"+url.PathEscape(all.Email), nil, nil); err != nil {
		t.Fatal(err)
	}
	if resp := rawMCP(t, site.MCPURL, token); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after revocation: HTTP %d, want 401", resp.StatusCode)
	}
	mustSucceed(t, callTool(t, ngaio.cs, "get_current_user", nil), "the other person after the revocation")

	people = peopleResponse{}
	if err := gw.admin.do(ctx, http.MethodGet, "/sites/acme/people", nil, &people); err != nil {
		t.Fatal(err)
	}
	if len(people.People) != 1 || people.People[0].ERPUser != nz.Email {
		t.Fatalf("people after revocation = %+v", people.People)
	}
	err := gw.admin.do(ctx, http.MethodDelete, "/sites/acme/people/"+url.PathEscape(all.Email), nil, nil)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Fatalf("revoking again: %v, want 404", err)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'revoke_person'
		AND outcome = 'success' AND details->>'erp_user' = $1`, all.Email); n != 1 {
		t.Errorf("%d revoke_person events for %s, want 1", n, all.Email)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'put_oauth_connection' AND outcome = 'success'`); n != 1 {
		t.Errorf("%d put_oauth_connection events, want 1", n)
	}
}
