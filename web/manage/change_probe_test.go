package manage

import (
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// TestTenantMoveAsksTheERPFirst: an owner's move to another tenant sends
// them to sign in at the ERP only when the site's address answers as an
// ERP of its kind. An address where another kind of ERP answers, or where
// nothing answers, gets the owner's page again with a sentence saying so;
// the change is dropped and its refusal recorded. An Acumatica instance at
// the address still gets the sign-in.
func TestTenantMoveAsksTheERPFirst(t *testing.T) {
	p := newPages(t)
	ctx := t.Context()
	admin := p.h.deps.Admin
	frappeERP := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(frappeERP.Close)
	acumaticaERP := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(acumaticaERP.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const key = "owner-csrf-key-of-this-test-browser-0123456789"
	for _, c := range []struct {
		name, slug, baseURL string
		status              int
		// sentence is on the page when the owner is not sent to the ERP;
		// location starts the redirect when they are.
		sentence, location string
	}{
		{name: "a Frappe site answers", slug: "acu-frappe", baseURL: frappeERP.URL, status: http.StatusBadGateway,
			sentence: "The address " + frappeERP.URL + " does not answer as Acumatica. erpgate did not send you there to sign in, and nothing was changed."},
		{name: "nothing answers", slug: "acu-closed", baseURL: closed, status: http.StatusBadGateway,
			sentence: "The ERP at " + closed + " could not be reached. erpgate did not send you there to sign in, and nothing was changed."},
		{name: "Acumatica answers", slug: "acu-real", baseURL: acumaticaERP.URL, status: http.StatusSeeOther,
			location: acumaticaERP.URL + "/identity/connect/authorize?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			site, err := admin.CreateSite(ctx, siteadmin.Operator, siteadmin.NewSite{Slug: c.slug, Kind: "acumatica", DisplayName: "Site " + c.slug,
				BaseURL: c.baseURL, Settings: json.RawMessage(`{"tenant":"Company"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.PutOAuthConnection(ctx, siteadmin.Operator, site, map[string]string{
				"client_id": "2C8A6E3D-1B4F-4E0A-9D7C-5F3B8A1E6C24@Company", "client_secret": "Xq2rT9vLmN4pW7sK1bZ3cD8e"}); err != nil {
				t.Fatal(err)
			}
			form := url.Values{"csrf": {pagekit.CSRFToken(key, csrfPurpose(site))}, "display_name": {site.DisplayName},
				"setting_tenant": {"OtherCompany"}, "setting_endpoint_name": {"Default"}, "setting_endpoint_version": {"24.200.001"}}
			req, err := http.NewRequest(http.MethodPost, p.srv.URL+"/sites/"+c.slug+"/manage/settings", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(p.session(site, "admin@Company"))
			req.AddCookie(p.h.deps.Kit.Cookie(csrfCookie, key, time.Hour))
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if resp.StatusCode != c.status {
				t.Fatalf("HTTP %d (Location %q), want %d: %s", resp.StatusCode, loc, c.status, signin.PageText(string(body)))
			}
			if c.location != "" {
				if !strings.HasPrefix(loc, c.location) {
					t.Errorf("sent to %q, want %s…", loc, c.location)
				}
				return
			}
			if loc != "" {
				t.Errorf("sent to %q", loc)
			}
			if text := strings.Join(strings.Fields(html.UnescapeString(string(body))), " "); !strings.Contains(text, c.sentence) {
				t.Errorf("the page does not say %q: %s", c.sentence, signin.PageText(string(body)))
			}
			var waiting, refused int
			if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM owner_changes WHERE site_id = $1`, site.ID).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM admin_events WHERE site_slug = $1 AND action = 'update_site'
				AND actor_kind = 'erp_admin' AND outcome = 'refused'`, c.slug).Scan(&refused); err != nil {
				t.Fatal(err)
			}
			if waiting != 0 || refused != 1 {
				t.Errorf("%d changes still wait for a proof (want 0), %d refused update_site events (want 1)", waiting, refused)
			}
			after, err := p.h.deps.Store.GetSite(ctx, site.ID)
			if err != nil {
				t.Fatal(err)
			}
			var settings struct {
				Tenant string `json:"tenant"`
			}
			if err := json.Unmarshal(after.Settings, &settings); err != nil || settings.Tenant != "Company" {
				t.Errorf("settings after the refusal: %s (%v)", after.Settings, err)
			}
		})
	}
}
