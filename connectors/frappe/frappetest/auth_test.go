package frappetest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const sample15 = `{"exception":"frappe.exceptions.AuthenticationError","exc_type":"AuthenticationError","exc":"[\"Traceback (most recent call last):\\n  File \\\"apps/frappe/frappe/app.py\\\", line 114, in application\\n    response = frappe.api.handle(request)\\n  ...\\nfrappe.exceptions.AuthenticationError\\n\"]"}`

func TestAuthHeaders(t *testing.T) {
	s := testServer(t)
	u := s.User("all-companies")
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(u.APIKey+":"+u.APISecret))
	for _, h := range []string{tokenAuth(u), basic, "TOKEN " + u.APIKey + ":" + u.APISecret} {
		r := call(t, s, h, "/api/method/frappe.auth.get_logged_user", nil)
		if r.raw != `{"message":"accounts@demo.example"}` {
			t.Errorf("%q: %s", h, r.raw)
		}
	}
	for _, h := range []string{
		"token nosuchkey:secret",
		"token " + u.APIKey + ":wrong",
		"token " + u.APIKey,
		"Bearer not-a-token",
		"Basic " + base64.StdEncoding.EncodeToString([]byte(u.Email+":"+u.Password)), // not username/password
	} {
		r := call(t, s, h, "/api/resource/Customer", nil)
		if r.status != 401 || r.raw != sample15 {
			t.Errorf("%q: %d %s", h, r.status, r.raw)
		}
	}
	r := call(t, s, "Basic abc", "/api/resource/Customer", nil)
	if r.status != 400 || r.body["exc_type"] != "InvalidAuthorizationToken" || !strings.Contains(r.raw, "Failed to decode token, please provide a valid base64-encoded token.") {
		t.Fatalf("bad base64: %d %s", r.status, r.raw)
	}
	// A header that is not exactly two parts is ignored: Guest.
	call(t, s, "token a b", "/api/resource/Customer", nil).expectStatus(t, 403)
}

func TestGuest(t *testing.T) {
	s := testServer(t)
	r := call(t, s, "", "/api/resource/Customer", nil)
	r.expectStatus(t, 403)
	if r.body["_error_message"] != "No permission for Customer" || !strings.Contains(r.raw, "User <strong>Guest</strong>") {
		t.Fatalf("guest list: %s", r.raw)
	}
	r = call(t, s, "", "/api/method/frappe.auth.get_logged_user", nil)
	if r.status != 403 || !strings.Contains(r.raw, "Method Not Allowed") {
		t.Fatalf("guest method: %d %s", r.status, r.raw)
	}
}

func TestBearerTokens(t *testing.T) {
	s := newServer(t, Options{})
	tok := s.IssueAccessToken("nz.accounts@demo.example", time.Hour)
	r := call(t, s, "Bearer "+tok, "/api/method/frappe.auth.get_logged_user", nil)
	if r.raw != `{"message":"nz.accounts@demo.example"}` {
		t.Fatalf("bearer: %s", r.raw)
	}
	expired := s.IssueAccessToken("accounts@demo.example", -time.Second)
	call(t, s, "Bearer "+expired, "/api/resource/Customer", nil).expectStatus(t, 401)
	s.RevokeAccessToken(tok)
	call(t, s, "Bearer "+tok, "/api/resource/Customer", nil).expectStatus(t, 401)
}

func TestLoginSession(t *testing.T) {
	s := newServer(t, Options{})
	u := s.User("no-accounting")
	post := func(form url.Values) (*http.Response, resp) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/method/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		req2, _ := http.NewRequest(http.MethodPost, s.URL+"/api/method/login", strings.NewReader(form.Encode()))
		req2.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return res, doReq(t, req2)
	}
	res, r := post(url.Values{"usr": {u.Email}, "pwd": {"wrong"}})
	if res.StatusCode != 401 || !strings.HasPrefix(r.raw, `{"message":"Invalid login credentials","exception":"frappe.exceptions.AuthenticationError"`) {
		t.Fatalf("bad login: %d %s", res.StatusCode, r.raw)
	}
	_, r = post(url.Values{"usr": {u.Email}, "pwd": {u.Password}})
	if r.raw != `{"message":"Logged In","home_page":"/app","full_name":"Sam Sales"}` {
		t.Fatalf("login: %s", r.raw)
	}
	var sid string
	for _, c := range r.header["Set-Cookie"] {
		if strings.HasPrefix(c, "sid=") {
			sid = strings.TrimPrefix(strings.SplitN(c, ";", 2)[0], "sid=")
		}
	}
	if sid == "" {
		t.Fatal("no sid cookie")
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/method/frappe.auth.get_logged_user", nil)
	req.AddCookie(&http.Cookie{Name: "sid", Value: sid})
	if r := doReq(t, req); r.raw != `{"message":"sales.viewer@demo.example"}` {
		t.Fatalf("cookie session: %s", r.raw)
	}
}
