package main

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

var (
	redirectField = regexp.MustCompile(`id="v-redirect">([^<]+)<`)
	apiStepError  = regexp.MustCompile(`id="api-error">([^<]*)<`)
)

// TestRegistrationAPIStepAsksTheERPAgain: the registration's last step
// (an API credential, then a service token) changes the registered site
// as its owner does on the owner's page, for as long as the registration
// stays open (30 minutes). Once the ERP took the registrant's System
// Manager role away, it is refused as the owner's page refuses a change:
// nothing is saved, no token is issued, the refusal is recorded.
func TestRegistrationAPIStepAsksTheERPAgain(t *testing.T) {
	sim, gw, b, path, admin, bot := registrationAtTheAPIStep(t)
	csrf := b.csrf(path)

	demoted := admin
	demoted.Roles = slices.DeleteFunc(slices.Clone(admin.Roles), func(r string) bool { return r == frappetest.SystemManager })
	sim.AddUser(demoted)
	status, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	if status != http.StatusForbidden || !strings.Contains(strings.Join(strings.Fields(page), " "), "no longer lists you as an administrator") {
		t.Errorf("the API step after the demotion: HTTP %d, want 403 saying the ERP no longer lists them: %s", status, pageText(page))
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
		t.Errorf("%d API credentials saved after the demotion, want 0", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens`); n != 0 {
		t.Errorf("%d service tokens issued after the demotion, want 0", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'refused' AND actor = $1`, admin.Email); n != 1 {
		t.Errorf("%d refused put_api_connection events of %s, want 1", n, admin.Email)
	}
	// The record keeps what the ERP answered, as the owner's page does.
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'refused'
		AND details->>'evidence' LIKE '%' || $1 || '%'`, frappetest.SystemManager); n != 1 {
		t.Errorf("%d refusals of the demoted registrant whose details name the role the ERP took away, want 1", n)
	}

	// Administrator again, but the ERP cannot be reached: refused and
	// recorded as the ERP being unreachable, not as a rejection.
	sim.AddUser(admin)
	sim.SetFault(frappetest.Fault{ResetConnection: true})
	status, _, page = b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	sim.ClearFaults()
	if status != http.StatusBadGateway || !strings.Contains(strings.Join(strings.Fields(page), " "), "could not be reached") {
		t.Errorf("the API step with the ERP unreachable: HTTP %d, want 502 saying so: %s", status, pageText(page))
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'refused' AND reason LIKE 'upstream_unreachable: %'`); n != 1 {
		t.Errorf("%d refusals recorded as the ERP unreachable, want 1", n)
	}

	// Reached again: the step works.
	status, _, page = b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	if status != http.StatusOK || queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens`) != 1 {
		t.Errorf("the API step of an administrator: HTTP %d: %s", status, pageText(page))
	}
}

// TestRegistrationDropsATokenTheERPRefused: once the ERP no longer
// accepts the token the registrant proved themselves with, nor renews it
// (its refresh token revoked), the last step is refused, and the token is
// dropped: it was kept, and sent to the ERP again at every later try,
// until the registration expired.
func TestRegistrationDropsATokenTheERPRefused(t *testing.T) {
	sim, gw, b, path, admin, bot := registrationAtTheAPIStep(t)
	csrf := b.csrf(path)
	sim.ExpireTokens()
	sim.RevokeRefreshTokens(admin.Email)
	status, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	if status != http.StatusForbidden || !strings.Contains(strings.Join(strings.Fields(page), " "), "no longer accepts your sign-in") {
		t.Errorf("the API step with an expired token: HTTP %d, want 403 saying the ERP no longer accepts the sign-in: %s", status, pageText(page))
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM owner_session_tokens`); n != 0 {
		t.Errorf("%d ERP tokens still kept after the ERP refused the registrant's, want 0", n)
	}
	asked := sim.RequestCount("/api")
	status, _, page = b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	if status != http.StatusForbidden || !strings.Contains(strings.Join(strings.Fields(page), " "), "no longer holds your sign-in") {
		t.Errorf("the API step again: HTTP %d, want 403 saying erpgate holds no sign-in: %s", status, pageText(page))
	}
	if n := sim.RequestCount("/api") - asked; n != 0 {
		t.Errorf("the ERP was asked %d times with the refused token again, want 0", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
		t.Errorf("%d API credentials saved, want 0", n)
	}
}

// registrationAtTheAPIStep registers the Frappe simulator's ERP as its
// administrator up to the last step (the API credential), and returns
// what that step needs: the registration's page path in b, the
// administrator and the service user whose API key the step is sent.
func registrationAtTheAPIStep(t *testing.T) (*frappetest.Server, *gateway, *registrationClient, string, frappetest.User, frappetest.User) {
	t.Helper()
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", nil)
	admin := userWithRole(t, sim, "administrator")
	bot := userWithRole(t, sim, "service")

	b := newRegistrationClient(t, gw.URL)
	path := b.startRegistration(sim.URL)
	status, _, page := b.do(http.MethodGet, path, nil, nil)
	m := redirectField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the client step: HTTP %d: %s", status, pageText(page))
	}
	redirect := m[1]
	client := sim.RegisterClient(redirect)
	br := signin.NewBrowser(redirect, frappeLogin(admin))
	br.HC = b.hc
	back, err := br.Run(context.Background(), http.MethodPost, gw.URL+path+"/client",
		url.Values{"csrf": {b.csrf(path)}, "client_id": {client.ID}, "client_secret": {client.Secret}})
	if err != nil {
		t.Fatalf("the proof at Frappe: %v", err)
	}
	if status, h, page := b.do(http.MethodGet, strings.TrimPrefix(back.String(), gw.URL), nil, nil); status != http.StatusSeeOther || h.Get("Location") != gw.URL+path {
		t.Fatalf("back from Frappe: HTTP %d to %q: %s", status, h.Get("Location"), pageText(page))
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites`); n != 1 {
		t.Fatalf("%d sites registered, want 1", n)
	}
	return sim, gw, b, path, admin, bot
}

// TestRegistrationAPIStepWhoseTokenIsRefusedSavesNothing: the last step
// saved the API credential, then issued the service token; when the token
// was refused (the operator disabled the site between the two writes; the
// site had as many tokens as it may), the person saw the generic error
// page and the credential stayed saved. The two are one write now: a
// refused token leaves nothing saved, and the page says why in plain
// words.
func TestRegistrationAPIStepWhoseTokenIsRefusedSavesNothing(t *testing.T) {
	t.Run("the operator disables the site", func(t *testing.T) {
		_, gw, b, path, _, bot := registrationAtTheAPIStep(t)
		// The operator's disable lands right after the credential's write
		// (in its transaction: the earliest moment after it that the
		// token's write can see).
		execSQL(t, gw.DBURL, `CREATE FUNCTION test_operator_disables() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE sites SET status = 'disabled', disabled_by = 'operator' WHERE id = NEW.site_id; RETURN NEW; END $$`)
		execSQL(t, gw.DBURL, `CREATE TRIGGER test_operator_disables AFTER INSERT OR UPDATE ON connections
			FOR EACH ROW WHEN (NEW.type = 'api_token') EXECUTE FUNCTION test_operator_disables()`)
		status, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {b.csrf(path)}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
		words := strings.Join(strings.Fields(page), " ")
		if want := "Your erpgate operator disabled this site, so nothing was saved and no service token was issued."; status != http.StatusConflict || !strings.Contains(words, want) {
			t.Errorf("the API step: HTTP %d, want 409 saying %q: %s", status, want, pageText(page))
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
			t.Errorf("%d API credentials saved, want 0", n)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens`); n != 0 {
			t.Errorf("%d service tokens issued, want 0", n)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'success'`); n != 0 {
			t.Errorf("%d put_api_connection successes recorded, want 0", n)
		}
	})
	t.Run("the site has as many tokens as it may", func(t *testing.T) {
		_, gw, b, path, _, bot := registrationAtTheAPIStep(t)
		// The default bound, 100, issued before (by the operator).
		execSQL(t, gw.DBURL, `INSERT INTO service_tokens (id, site_id, name, token_hash, prefix)
			SELECT gen_random_uuid(), s.id, 'bot ' || n, sha256(('token ' || n)::bytea), 'egs_t' || n FROM sites s, generate_series(1, 100) n`)
		status, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {b.csrf(path)}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
		words := strings.Join(strings.Fields(page), " ")
		if want := "Nothing was saved and no service token was issued: this site already has 100 active service tokens; revoke one you no longer use first."; status != http.StatusConflict || !strings.Contains(words, want) {
			t.Errorf("the API step: HTTP %d, want 409 saying %q: %s", status, want, pageText(page))
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
			t.Errorf("%d API credentials saved, want 0", n)
		}
	})
}

// TestRegistrationAPIStepSaysTheERPsBadRequestPlainly: an ERP that answers
// the credential's check as a bad request (HTTP 400, 417) was shown to the
// person in the words of a tool error written for a model, the HTTP status
// and the ERP's own message included. The page says it plainly now, and
// nothing is saved.
func TestRegistrationAPIStepSaysTheERPsBadRequestPlainly(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusExpectationFailed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			sim, gw, b, path, _, bot := registrationAtTheAPIStep(t)
			sim.SetFault(frappetest.Fault{PathPrefix: "/api/method/frappe.auth.get_logged_user", Status: status})
			got, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {b.csrf(path)}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
			m := apiStepError.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("the API step: HTTP %d, no error on the page: %s", got, pageText(page))
			}
			said := strings.Join(strings.Fields(m[1]), " ")
			if want := "The ERP did not accept the request that checks this credential, so nothing was saved. Check that each field is copied exactly as the ERP shows it, and try again."; got != http.StatusBadRequest || said != want {
				t.Errorf("the API step: HTTP %d saying %q; want 400 saying %q", got, said, want)
			}
			if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
				t.Errorf("%d API credentials saved, want 0", n)
			}
		})
	}
}

// TestRegistrationAPIStepOnASiteWithoutItsOAuthClientSaysSoPlainly: the
// operator removed the registered site's OAuth connection while the
// registration was open, and the registrant's kept ERP token has expired,
// so it would have to be renewed with a client the site no longer has.
// The last step is refused in a sentence (nothing was saved, the site has
// no OAuth sign-in, ask the operator), not with the generic error page;
// nothing is saved and the refusal is recorded.
func TestRegistrationAPIStepOnASiteWithoutItsOAuthClientSaysSoPlainly(t *testing.T) {
	sim, gw, b, path, admin, bot := registrationAtTheAPIStep(t)
	csrf := b.csrf(path)
	siteID := queryString(t, gw.DBURL, `SELECT id::text FROM sites`)
	if err := gw.admin.do(context.Background(), http.MethodDelete, "/sites/"+siteID+"/connections/oauth", nil, nil); err != nil {
		t.Fatalf("the operator removes the OAuth connection: %v", err)
	}
	sim.ExpireTokens()
	status, _, page := b.do(http.MethodPost, path+"/api", url.Values{"csrf": {csrf}, "api_key": {bot.APIKey}, "api_secret": {bot.APISecret}}, nil)
	text := strings.Join(strings.Fields(page), " ")
	for _, want := range []string{"nothing was saved", "no OAuth sign-in", "operator"} {
		if status != http.StatusForbidden || !strings.Contains(text, want) {
			t.Errorf("the API step: HTTP %d, want 403 saying %q: %s", status, want, pageText(page))
		}
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM connections WHERE type = 'api_token'`); n != 0 {
		t.Errorf("%d API credentials saved, want 0", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens`); n != 0 {
		t.Errorf("%d service tokens issued, want 0", n)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'put_api_connection' AND outcome = 'refused' AND actor = $1`, admin.Email); n != 1 {
		t.Errorf("%d refused put_api_connection events of %s, want 1", n, admin.Email)
	}
}
