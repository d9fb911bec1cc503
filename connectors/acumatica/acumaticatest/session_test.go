package acumaticatest

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The cookie sign-in exists on the real server; token clients must not
// depend on it, but it behaves as documented.
func TestCookieSignIn(t *testing.T) {
	s := newTestServer(t, Options{})
	resp, b := call(t, http.MethodPost, s.URL+"/entity/auth/login", "", strings.NewReader(`{"name":"admin","password":"wrong"}`))
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "Error: Invalid credentials. Please try again.") {
		t.Errorf("wrong password: %d %s", resp.StatusCode, b)
	}
	resp, _ = call(t, http.MethodPost, s.URL+"/entity/auth/login", "", strings.NewReader(`{"name":"admin","password":"admin-P@ss1","tenant":"Demo"}`))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	names := map[string]bool{}
	for _, c := range resp.Cookies() {
		names[c.Name] = true
	}
	if !names[".ASPXAUTH"] || !names["ASP.NET_SessionId"] || !names["CompanyID"] || s.SeatsInUse() != 1 {
		t.Errorf("cookies %v seats %d", names, s.SeatsInUse())
	}
	req, _ := http.NewRequest(http.MethodGet, s.entityURL(Version24, "Currency", nil), nil)
	for _, c := range resp.Cookies() {
		req.AddCookie(c)
	}
	if r2, err := http.DefaultClient.Do(req); err != nil || r2.StatusCode != http.StatusOK {
		t.Errorf("cookie call: %v %v", err, r2)
	} else {
		r2.Body.Close()
	}
	// IIS refuses a POST without Content-Length (curl's bare logout).
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = conn.Write([]byte("POST /entity/auth/logout HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
	status, _ := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.Contains(status, " 411 ") {
		t.Errorf("logout without Content-Length: %q", status)
	}
	lo, _ := http.NewRequest(http.MethodPost, s.URL+"/entity/auth/logout", strings.NewReader(""))
	for _, c := range resp.Cookies() {
		lo.AddCookie(c)
	}
	if r4, err := http.DefaultClient.Do(lo); err != nil || r4.StatusCode != http.StatusNoContent || s.SeatsInUse() != 0 {
		t.Errorf("logout: %v %v seats %d", err, r4, s.SeatsInUse())
	} else {
		r4.Body.Close()
	}
}

// A changed password ends the tokens issued before it: their calls get
// PXLogin's 500 PXException, their refresh tokens are refused (400
// invalid_grant, or that 500 with InvalidCredentials500, as is a password
// grant with a wrong password); the new password signs in.
func TestChangedPasswordInvalidatesTokens(t *testing.T) {
	for _, as500 := range []bool{false, true} {
		s := newTestServer(t, Options{InvalidCredentials500: as500})
		svc := s.Clients()[1]
		status, body := tokenRequest(t, s, url.Values{"grant_type": {"password"}, "username": {"api.service"},
			"password": {"service-P@ss1"}, "scope": {"api offline_access"}}, svc.ID, svc.Secret)
		var tr struct {
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
		}
		if err := json.Unmarshal(body, &tr); status != http.StatusOK || err != nil {
			t.Fatalf("sign in: %d %s", status, body)
		}
		currency := s.URL + "/entity/Default/24.200.001/Currency/USD"
		if resp, b := call(t, http.MethodGet, currency, tr.AccessToken, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("before the change: %d %s", resp.StatusCode, b)
		}
		s.ChangePassword("api.service", "new-P@ss2")

		resp, b := call(t, http.MethodGet, currency, tr.AccessToken, nil)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), `"exceptionMessage":"Error: Invalid credentials. Please try again.","exceptionType":"PX.Data.PXException"`) {
			t.Errorf("call with a token from before the change: %d %s", resp.StatusCode, b)
		}
		status, b = tokenRequest(t, s, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr.RefreshToken}}, svc.ID, svc.Secret)
		wrong := url.Values{"grant_type": {"password"}, "username": {"api.service"}, "password": {"service-P@ss1"}, "scope": {"api"}}
		wstatus, wb := tokenRequest(t, s, wrong, svc.ID, svc.Secret)
		if as500 {
			if status != http.StatusInternalServerError || !strings.Contains(string(b), "Invalid credentials") {
				t.Errorf("refresh after the change (500 mode): %d %s", status, b)
			}
			if wstatus != http.StatusInternalServerError || !strings.Contains(string(wb), "PX.Data.PXException") {
				t.Errorf("old password (500 mode): %d %s", wstatus, wb)
			}
		} else {
			if status != http.StatusBadRequest || !strings.Contains(string(b), "invalid_grant") {
				t.Errorf("refresh after the change: %d %s", status, b)
			}
			if wstatus != http.StatusBadRequest || !strings.Contains(string(wb), "invalid_grant") {
				t.Errorf("old password: %d %s", wstatus, wb)
			}
		}
		status, body = tokenRequest(t, s, url.Values{"grant_type": {"password"}, "username": {"api.service"},
			"password": {"new-P@ss2"}, "scope": {"api"}}, svc.ID, svc.Secret)
		if err := json.Unmarshal(body, &tr); status != http.StatusOK || err != nil {
			t.Fatalf("new password: %d %s", status, body)
		}
		if resp, b := call(t, http.MethodGet, currency, tr.AccessToken, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("a token from after the change: %d %s", resp.StatusCode, b)
		}
	}
}
