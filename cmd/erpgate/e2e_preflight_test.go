package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// preflightResponse is the admin API's preflight result.
type preflightResponse struct {
	RanAt  string `json:"ran_at"`
	Passed bool   `json:"passed"`
	Checks []struct {
		ID     string `json:"id"`
		Title  string `json:"title"`
		Status string `json:"status"`
		Found  string `json:"found"`
		Fix    string `json:"fix"`
	} `json:"checks"`
}

// status returns each check's status by id.
func (p preflightResponse) status() map[string]string {
	out := map[string]string{}
	for _, c := range p.Checks {
		out[c.ID] = c.Status
	}
	return out
}

// check returns the check with id; it fails the test when there is none.
func (p preflightResponse) check(t *testing.T, id string) (found, fix string) {
	t.Helper()
	for _, c := range p.Checks {
		if c.ID == id {
			return c.Found, c.Fix
		}
	}
	t.Fatalf("no check %s in %+v", id, p.status())
	return "", ""
}

func runPreflight(t *testing.T, gw *gateway, siteID string) preflightResponse {
	t.Helper()
	var out preflightResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, "/sites/"+siteID+"/preflight", nil, &out); err != nil {
		t.Fatalf("run preflight: %v", err)
	}
	for _, c := range out.Checks {
		t.Logf("%-28s %-4s %s | %s", c.ID, c.Status, c.Found, c.Fix)
	}
	return out
}

// wantStatuses fails for every check whose status is not the one wanted.
func wantStatuses(t *testing.T, p preflightResponse, want map[string]string) {
	t.Helper()
	got := p.status()
	for id, w := range want {
		if got[id] != w {
			found, fix := p.check(t, id)
			t.Errorf("%s: %s, want %s (found %q, fix %q)", id, got[id], w, found, fix)
		}
	}
	if len(got) != len(want) {
		t.Errorf("checks %v, want exactly %v", got, want)
	}
}

func TestPreflightHealthyFrappeSite(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	bot := userWithRole(t, sim, "service")
	site := gw.registerFrappe(t, "acme", sim, bot)
	client := sim.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}

	p := runPreflight(t, gw, site.ID)
	if !p.Passed {
		t.Errorf("a healthy site failed its preflight: %+v", p.Checks)
	}
	wantStatuses(t, p, map[string]string{
		"dns": "pass", "tls": "pass", "api_credential": "pass", "oauth_client": "pass",
		"frappe.version": "pass", "frappe.oauth_endpoints": "pass", "frappe.redirect_uri": "pass", "frappe.shared_redirect_uri": "pass",
		// The API user is no System Manager, so it may not read OAuth
		// Clients: the check says what to look at instead.
		"frappe.oauth_client": "skip",
	})
	if found, _ := p.check(t, "api_credential"); !strings.Contains(found, bot.Email) {
		t.Errorf("api_credential found %q, want the API user %s", found, bot.Email)
	}
	if found, _ := p.check(t, "frappe.version"); !strings.Contains(found, "frappe "+frappetest.DefaultFrappeVersion) || !strings.Contains(found, "erpnext "+frappetest.ERPNextVersion) {
		t.Errorf("frappe.version found %q", found)
	}
	if found, _ := p.check(t, "frappe.oauth_client"); !strings.Contains(found, gw.callbackURL(t, site.Slug)) {
		t.Errorf("frappe.oauth_client does not say which redirect URI to look for: %q", found)
	}

	t.Run("the last result is stored and read back", func(t *testing.T) {
		var last preflightResponse
		if err := gw.admin.do(context.Background(), http.MethodGet, "/sites/"+site.ID+"/preflight", nil, &last); err != nil {
			t.Fatal(err)
		}
		if last.RanAt != p.RanAt || last.Passed != p.Passed || len(last.Checks) != len(p.Checks) {
			t.Errorf("stored %+v, ran %+v", last, p)
		}
	})

	t.Run("a client that still lists the shared redirect URI fails with how to fix it", func(t *testing.T) {
		shared := gw.URL + "/oauth/callback"
		both := sim.RegisterClient(gw.callbackURL(t, site.Slug), shared)
		if err := gw.admin.putOAuthClient(context.Background(), site.ID, both.ID, both.Secret); err != nil {
			t.Fatal(err)
		}
		p := runPreflight(t, gw, site.ID)
		if p.Passed || p.status()["frappe.shared_redirect_uri"] != "fail" || p.status()["frappe.redirect_uri"] != "pass" {
			t.Fatalf("preflight with a client that lists both redirect URIs: %+v", p.status())
		}
		found, fix := p.check(t, "frappe.shared_redirect_uri")
		if !strings.Contains(found, "still lists "+shared) || !strings.Contains(fix, "remove "+shared) || !strings.Contains(fix, both.ID) {
			t.Errorf("found %q, fix %q", found, fix)
		}
	})

	t.Run("a wrong redirect URI fails with how to fix it", func(t *testing.T) {
		other := sim.RegisterClient("https://elsewhere.example/callback")
		if err := gw.admin.putOAuthClient(context.Background(), site.ID, other.ID, other.Secret); err != nil {
			t.Fatal(err)
		}
		p := runPreflight(t, gw, site.ID)
		if p.Passed || p.status()["frappe.redirect_uri"] != "fail" {
			t.Fatalf("preflight with a client for another redirect URI: %+v", p.Checks)
		}
		found, fix := p.check(t, "frappe.redirect_uri")
		if !strings.Contains(found, "does not list") || !strings.Contains(fix, gw.callbackURL(t, site.Slug)) || !strings.Contains(fix, other.ID) {
			t.Errorf("found %q, fix %q", found, fix)
		}
	})

	t.Run("every run is audited", func(t *testing.T) {
		var n int
		if err := gw.App.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = 'run_preflight' AND outcome = 'success'`, site.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("%d run_preflight events, want 3", n)
		}
	})
}

func TestPreflightAcumaticaCanary(t *testing.T) {
	acu := acumaticatest.NewServer(acumaticatest.Options{})
	defer acu.Close()
	gw := startGateway(t, "", nil)
	svc := acumaticaService(acu.ServiceLogin())
	site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, svc, "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	client := acu.RegisterClient(gw.callbackURL(t, site.Slug))
	if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
		t.Fatal(err)
	}

	t.Run("a healthy site passes", func(t *testing.T) {
		p := runPreflight(t, gw, site.ID)
		if !p.Passed {
			t.Errorf("a healthy site failed its preflight: %+v", p.Checks)
		}
		wantStatuses(t, p, map[string]string{
			"dns": "pass", "tls": "pass", "api_credential": "pass", "oauth_client": "pass",
			"acumatica.oauth_endpoints": "pass", "acumatica.redirect_uri": "pass", "acumatica.shared_redirect_uri": "pass", "acumatica.endpoint_version": "pass",
			"acumatica.canary_exposed": "pass", "acumatica.canary_readable": "pass",
		})
		if found, _ := p.check(t, "acumatica.endpoint_version"); !strings.Contains(found, "Default/24.200.001") || !strings.Contains(found, acumaticatest.BuildVersion) {
			t.Errorf("endpoint_version found %q", found)
		}
	})

	t.Run("a client that still accepts the shared redirect URI fails with how to fix it", func(t *testing.T) {
		shared := gw.URL + "/oauth/callback"
		both := acu.RegisterClient(gw.callbackURL(t, site.Slug), shared)
		if err := gw.admin.putOAuthClient(context.Background(), site.ID, both.ID, both.Secret); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := gw.admin.putOAuthClient(context.Background(), site.ID, client.ID, client.Secret); err != nil {
				t.Fatal(err)
			}
		}()
		p := runPreflight(t, gw, site.ID)
		if p.Passed || p.status()["acumatica.shared_redirect_uri"] != "fail" || p.status()["acumatica.redirect_uri"] != "pass" {
			t.Fatalf("preflight with a client that accepts both redirect URIs: %+v", p.status())
		}
		found, fix := p.check(t, "acumatica.shared_redirect_uri")
		if !strings.Contains(found, "still accepts "+shared) || !strings.Contains(fix, "remove "+shared) || !strings.Contains(fix, both.ID) {
			t.Errorf("found %q, fix %q", found, fix)
		}
	})

	t.Run("a broken canary inquiry fails with how to fix it", func(t *testing.T) {
		if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID,
			map[string]any{"settings": map[string]any{"tenant": svc.Tenant, "canary_gi": "MCPAccessGone"}}, nil); err != nil {
			t.Fatal(err)
		}
		p := runPreflight(t, gw, site.ID)
		if p.Passed {
			t.Fatalf("a site whose canary inquiry does not exist passed: %+v", p.Checks)
		}
		st := p.status()
		if st["acumatica.canary_exposed"] != "fail" || st["acumatica.canary_readable"] != "fail" || st["api_credential"] != "pass" {
			t.Errorf("statuses %v", st)
		}
		found, fix := p.check(t, "acumatica.canary_exposed")
		if !strings.Contains(found, "MCPAccessGone is not one of them") || !strings.Contains(fix, "Expose via OData") || !strings.Contains(fix, "canary_gi") {
			t.Errorf("canary_exposed found %q, fix %q", found, fix)
		}
		found, fix = p.check(t, "acumatica.canary_readable")
		if !strings.Contains(found, "404") || !strings.Contains(fix, "MCPAccessGone") {
			t.Errorf("canary_readable found %q, fix %q", found, fix)
		}
	})

	t.Run("an endpoint the instance lacks fails", func(t *testing.T) {
		if err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/"+site.ID,
			map[string]any{"settings": map[string]any{"tenant": svc.Tenant, "endpoint_name": "Custom", "endpoint_version": "23.200.001"}}, nil); err != nil {
			t.Fatal(err)
		}
		p := runPreflight(t, gw, site.ID)
		found, fix := p.check(t, "acumatica.endpoint_version")
		if p.status()["acumatica.endpoint_version"] != "fail" || !strings.Contains(found, "no endpoint Custom/23.200.001; it has Default/24.200.001, Default/25.200.001") || !strings.Contains(fix, "endpoint_version") {
			t.Errorf("endpoint_version %s: found %q, fix %q", p.status()["acumatica.endpoint_version"], found, fix)
		}
	})
}

func TestPreflightUnreachableSite(t *testing.T) {
	gw := startGateway(t, "", nil)
	// A port nothing listens on.
	closed := closedAddress(t)
	// A TLS server whose certificate erpgate does not trust.
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()

	for _, c := range []struct {
		name, baseURL, failed, found, fix string
	}{
		{"nothing listens", closed, "tls", "nothing answered", "firewall"},
		{"an untrusted certificate", untrusted.URL, "tls", "not signed by an authority erpgate trusts", "certificate authority"},
		{"a name that does not resolve", "https://erp.invalid", "dns", "does not resolve", "base URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var site siteResponse
			slug := strings.ReplaceAll(c.name, " ", "-")
			if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
				map[string]any{"slug": slug, "kind": "frappe", "display_name": c.name, "base_url": c.baseURL}, &site); err != nil {
				t.Fatal(err)
			}
			p := runPreflight(t, gw, site.ID)
			if p.Passed {
				t.Fatalf("an unreachable site passed: %+v", p.Checks)
			}
			found, fix := p.check(t, c.failed)
			if p.status()[c.failed] != "fail" || !strings.Contains(found, c.found) || !strings.Contains(fix, c.fix) {
				t.Errorf("%s %s: found %q, fix %q", c.failed, p.status()[c.failed], found, fix)
			}
			// What needs the ERP is skipped, not failed a second time.
			if st := p.status(); st["frappe"] != "skip" || (c.failed == "dns" && st["tls"] != "skip") {
				t.Errorf("statuses %v", st)
			}
		})
	}
}
