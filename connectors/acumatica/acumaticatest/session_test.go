package acumaticatest

import (
	"bufio"
	"net"
	"net/http"
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
