package acumaticatest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestVirtualDirectory mounts the instance under /AcumaticaERP, the shape
// of an on-premises install: every surface answers under it, the links it
// writes carry it, and the same paths at the web root are IIS 404 pages.
func TestVirtualDirectory(t *testing.T) {
	s := newTestServer(t, Options{PathPrefix: "/AcumaticaERP/"})
	if s.URL != s.Origin+"/AcumaticaERP" {
		t.Fatalf("URL %q, origin %q", s.URL, s.Origin)
	}
	tok := passwordToken(t, s, "admin", "api")

	status, b := get(t, s.URL+"/identity/.well-known/openid-configuration", "")
	if status != http.StatusOK || !strings.Contains(string(b), `"token_endpoint":"`+s.URL+`/identity/connect/token"`) {
		t.Errorf("discovery under the directory: %d %s", status, b)
	}
	status, b = get(t, s.URL+"/entity", tok)
	if status != http.StatusOK || !strings.Contains(string(b), `"href":"/AcumaticaERP/entity/Default/`) {
		t.Errorf("entity root under the directory: %d %s", status, b)
	}
	status, b = get(t, s.entityURL(Version24, "Customer?$top=1", nil), tok)
	if status != http.StatusOK || !strings.Contains(string(b), `"self":"/AcumaticaERP/entity/Default/24.200.001/Customer/`) {
		t.Errorf("contract list under the directory: %d %s", status, b)
	}
	status, b = get(t, s.URL+"/t/Demo/api/odata/gi/MCPAccess?$top=1", tok)
	if status != http.StatusOK || !strings.Contains(string(b), s.URL+"/t/Demo/api/odata/gi/$metadata") {
		t.Errorf("OData under the directory: %d %s", status, b)
	}

	// The authorization-code flow follows the directory through the
	// sign-in and consent forms.
	redirect := "http://127.0.0.1:9/cb"
	c := s.RegisterClient(redirect)
	loc, err := CompleteAuthorization(nil, authorizeURL(s, c, redirect, "api openid", "st", ""), "admin", "admin-P@ss1")
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorization under the directory: %v %v", loc, err)
	}

	before := s.OutsideRequests()
	for _, p := range []string{"/identity/connect/token", "/entity/Default/24.200.001/Customer", "/t/Demo/api/odata/gi/MCPAccess", "/AcumaticaERPX/entity", "/"} {
		resp, b := call(t, http.MethodGet, s.Origin+p, tok, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "File or directory not found") {
			t.Errorf("%s outside the directory: %d %s", p, resp.StatusCode, b)
		}
	}
	if status, _ := tokenRequest(t, &Server{URL: s.Origin}, url.Values{"grant_type": {"password"}}, "x", "y"); status != http.StatusNotFound {
		t.Errorf("token endpoint at the web root: %d", status)
	}
	if got := s.OutsideRequests() - before; got != 6 {
		t.Errorf("outside requests counted %d, want 6", got)
	}
	// IIS matches the directory without regard to case.
	if status, _ := get(t, s.Origin+"/acumaticaerp/entity/Default/24.200.001/Customer?$top=1", tok); status != http.StatusOK {
		t.Errorf("directory in another case: %d", status)
	}
}
