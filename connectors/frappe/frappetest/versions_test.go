package frappetest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestGetVersions(t *testing.T) {
	s := newServer(t, Options{FrappeVersion: "14.70.0"})
	if r := call(t, s, "", "/api/method/frappe.utils.change_log.get_versions", nil); r.status != http.StatusForbidden {
		t.Errorf("Guest: %d %s, want 403 as for any method a Guest may not call", r.status, r.raw)
	}
	r := admin(t, s, "/api/method/frappe.utils.change_log.get_versions", nil)
	apps, _ := r.body["message"].(map[string]any)
	frappe, _ := apps["frappe"].(map[string]any)
	erpnext, _ := apps["erpnext"].(map[string]any)
	if r.status != http.StatusOK || frappe["version"] != "14.70.0" || frappe["title"] != "Frappe Framework" || erpnext["version"] != ERPNextVersion {
		t.Errorf("get_versions: %d %s", r.status, r.raw)
	}
}

func TestOAuthClientDocument(t *testing.T) {
	s := newServer(t, Options{})
	c := s.RegisterClient("https://gw.example/oauth/callback")
	path := "/api/resource/OAuth%20Client/" + c.ID
	// Only a System Manager may read it; no demo user is one.
	if r := admin(t, s, path, nil); r.status != http.StatusForbidden || !strings.Contains(r.raw, "PermissionError") {
		t.Errorf("as the accounts user: %d %.300s, want 403 PermissionError", r.status, r.raw)
	}
	if r := admin(t, s, "/api/resource/OAuth%20Client/nosuchclient", nil); r.status != http.StatusNotFound {
		t.Errorf("unknown client: %d %.300s, want 404 (before any permission check)", r.status, r.raw)
	}
}

// Frappe sends a Guest to the login page before it validates the client
// or the redirect URI (shared/erp-api/frappe/api-facts.md §2.2); a signed-in user gets the error.
func TestAuthorizeSendsAGuestToLoginFirst(t *testing.T) {
	s := newServer(t, Options{})
	c := s.RegisterClient("https://gw.example/oauth/callback")
	q := url.Values{"client_id": {c.ID}, "redirect_uri": {"https://elsewhere.example/cb"}, "response_type": {"code"}, "scope": {"all openid"}}
	target := s.URL + "/api/method/frappe.integrations.oauth2.authorize?" + q.Encode()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(target)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/login?redirect-to=") {
		t.Errorf("Guest with a wrong redirect URI: %d to %q, want 302 to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	req, _ := http.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", tokenAuth(s.User("service")))
	r := doReq(t, req)
	if r.status != http.StatusBadRequest || r.body["error"] != "mismatching_redirect_uri" {
		t.Errorf("signed in with a wrong redirect URI: %d %s, want 400 mismatching_redirect_uri", r.status, r.raw)
	}
}
