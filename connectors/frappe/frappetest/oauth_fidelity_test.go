package frappetest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// passwordTokens runs the password grant for u with client and returns the
// access and refresh tokens.
func passwordTokens(t *testing.T, s *Server, client OAuthClient, u User) (access, refresh string) {
	t.Helper()
	res, body := fetch(t, http.DefaultClient, http.MethodPost, s.URL+"/api/method/frappe.integrations.oauth2.get_token", url.Values{
		"grant_type": {"password"}, "username": {u.Email}, "password": {u.Password}, "client_id": {client.ID}})
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); res.StatusCode != http.StatusOK || err != nil || tok.Refresh == "" {
		t.Fatalf("get_token: %d %s", res.StatusCode, body)
	}
	return tok.Access, tok.Refresh
}

// TestRefreshGrantOfARevokedTokenIsNotFound: the access and refresh token
// are one OAuth Bearer Token document, so revoking either kills both, and
// a refresh grant whose token is revoked or unknown is Frappe's 404
// DoesNotExistError (validate_refresh_token's frappe.get_doc raises), not
// an OAuth invalid_grant; an unknown client_id is the same 404.
func TestRefreshGrantOfARevokedTokenIsNotFound(t *testing.T) {
	s := newServer(t, Options{})
	client := s.AddClient(OAuthClient{AppName: "erpgate", RedirectURIs: []string{"https://gw.example/cb"}})
	u := s.User("all-companies")
	tokenURL := s.URL + "/api/method/frappe.integrations.oauth2.get_token"
	refresh := func(tok, clientID string) (int, map[string]any) {
		res, body := fetch(t, http.DefaultClient, http.MethodPost, tokenURL, url.Values{
			"grant_type": {"refresh_token"}, "refresh_token": {tok}, "client_id": {clientID}})
		var out map[string]any
		_ = json.Unmarshal([]byte(body), &out)
		return res.StatusCode, out
	}
	revoke := func(form url.Values) {
		res, body := fetch(t, http.DefaultClient, http.MethodPost, s.URL+"/api/method/frappe.integrations.oauth2.revoke_token", form)
		if res.StatusCode != http.StatusOK || body != "{}" {
			t.Fatalf("revoke_token: %d %s", res.StatusCode, body)
		}
	}
	notFound := func(what string, status int, out map[string]any, message string) {
		t.Helper()
		if status != http.StatusNotFound || out["exc_type"] != "DoesNotExistError" || out["exception"] != nil ||
			!strings.Contains(out["_server_messages"].(string), message) {
			t.Errorf("%s: %d %v", what, status, out)
		}
	}

	access, rt := passwordTokens(t, s, client, u)
	if status, out := refresh(rt, client.ID); status != http.StatusOK || out["access_token"] == nil {
		t.Fatalf("live refresh token: %d %v", status, out)
	}
	status, out := refresh("nosuchrefreshtoken", client.ID)
	notFound("unknown refresh token", status, out, `OAuth Bearer Token {'refresh_token': 'nosuchrefreshtoken', 'status': 'Active'} not found`)
	status, out = refresh(rt, "c0ffee0003")
	notFound("unknown client", status, out, "OAuth Client c0ffee0003 not found")

	// Revoking the access token (no hint) revokes its refresh token.
	revoke(url.Values{"token": {access}, "client_id": {client.ID}})
	status, out = refresh(rt, client.ID)
	notFound("refresh token of a revoked access token", status, out, "not found")

	// Revoking the refresh token revokes its access token.
	access, rt = passwordTokens(t, s, client, u)
	revoke(url.Values{"token": {rt}, "token_type_hint": {"refresh_token"}, "client_id": {client.ID}})
	if r := call(t, s, "Bearer "+access, "/api/method/frappe.auth.get_logged_user", nil); r.status != http.StatusUnauthorized {
		t.Errorf("access token of a revoked refresh token: %d %s", r.status, r.raw)
	}
	// A refresh token sent without the hint is looked up as an access
	// token: nothing is revoked.
	access, rt = passwordTokens(t, s, client, u)
	revoke(url.Values{"token": {rt}, "client_id": {client.ID}})
	if status, _ := refresh(rt, client.ID); status != http.StatusOK {
		t.Errorf("refresh token revoked without its hint: %d", status)
	}
	if r := call(t, s, "Bearer "+access, "/api/method/frappe.auth.get_logged_user", nil); r.status != http.StatusOK {
		t.Errorf("access token after revoking a refresh token without its hint: %d", r.status)
	}
}

// TestAuthorizeChecksAllowedRoles: validate_client_id admits a user with
// one of the client's Allowed Roles (Desk User by default, every system
// user's) and answers invalid_client_id to others, as for an unknown
// client; a read of the client shows the roles.
func TestAuthorizeChecksAllowedRoles(t *testing.T) {
	s := newServer(t, Options{})
	redirect := "https://gw.example/oauth/callback"
	open := s.AddClient(OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}, SkipAuthorization: true})
	restricted := s.AddClient(OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}, SkipAuthorization: true, AllowedRoles: []string{"Accounts User"}})
	authorize := func(u User, client OAuthClient) resp {
		q := url.Values{"client_id": {client.ID}, "response_type": {"code"}, "redirect_uri": {redirect}, "scope": {"all openid"}}
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/method/frappe.integrations.oauth2.authorize?"+q.Encode(), nil)
		req.Header.Set("Authorization", tokenAuth(u))
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return resp{status: res.StatusCode, header: res.Header}
	}
	sales, accounts := s.User("no-accounting"), s.User("field-limited")
	for _, tc := range []struct {
		u      User
		client OAuthClient
		ok     bool
	}{{sales, open, true}, {accounts, open, true}, {accounts, restricted, true}, {sales, restricted, false}} {
		r := authorize(tc.u, tc.client)
		if ok := r.status == http.StatusFound; ok != tc.ok {
			t.Errorf("%s with client allowing %v: %d", tc.u.Role, tc.client.AllowedRoles, r.status)
		}
	}
	r := call(t, s, tokenAuth(s.User(RoleAdministrator)), "/api/resource/OAuth Client/"+restricted.ID, nil)
	rows, _ := r.body["data"].(map[string]any)["allowed_roles"].([]any)
	if r.status != http.StatusOK || len(rows) != 1 || rows[0].(map[string]any)["role"] != "Accounts User" {
		t.Errorf("allowed_roles = %v", rows)
	}
}

// TestPreparedReportsOption: a report a site has made prepared answers the
// empty prepared envelope (with the report's add_total_row flag) unless
// ignore_prepared_report.
func TestPreparedReportsOption(t *testing.T) {
	s := newServer(t, Options{PreparedReports: []string{"General Ledger"}})
	params := map[string]string{"report_name": "General Ledger",
		"filters": `{"company":"Demo Holdings NZ Ltd","from_date":"2025-03-01","to_date":"2025-03-31"}`}
	r := admin(t, s, "/api/method/frappe.desk.query_report.run", params)
	if r.status != http.StatusOK || r.raw != `{"message":{"prepared_report":true,"doc":null,"add_total_row":0}}` {
		t.Fatalf("prepared: %d %s", r.status, r.raw)
	}
	params["ignore_prepared_report"] = "1"
	r = admin(t, s, "/api/method/frappe.desk.query_report.run", params)
	if m, _ := r.body["message"].(map[string]any); r.status != http.StatusOK || len(m["result"].([]any)) == 0 {
		t.Fatalf("ignore_prepared_report: %d %.300s", r.status, r.raw)
	}
}
