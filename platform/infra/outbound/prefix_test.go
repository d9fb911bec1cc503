package outbound

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestCredentialsOnlyUnderSitePath: a site under a virtual directory
// (http://host/AcumaticaERP) shares its origin with whatever else the host
// serves. Its credential goes only to requests under the directory;
// requests elsewhere on the origin and redirects out of it carry none,
// and dot segments that climb out of it are not sent.
func TestCredentialsOnlyUnderSitePath(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]string{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		switch r.URL.Path {
		case "/AcumaticaERP/redirect-out":
			http.Redirect(w, r, "/Other/collect", http.StatusFound)
		case "/AcumaticaERP/redirect-in":
			http.Redirect(w, r, "/AcumaticaERP/echo", http.StatusFound)
		}
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, srv.URL+"/AcumaticaERP"), bearer)

	get := func(u string) (string, error) {
		resp, err := c.Get(u)
		if err != nil {
			return "", err
		}
		b, err := ReadBody(resp)
		return string(b), err
	}
	for _, p := range []string{"/AcumaticaERP", "/AcumaticaERP/entity/Default/24.200.001/Customer", "/AcumaticaERP/redirect-in"} {
		if got, err := get(srv.URL + p); err != nil || got != "token key:secret" {
			t.Errorf("%s under the directory: %q, %v", p, got, err)
		}
	}
	for _, p := range []string{"/Other/collect", "/", "/AcumaticaERPX/entity"} {
		got, err := get(srv.URL + p)
		if err != nil {
			t.Errorf("%s outside the directory: %v", p, err)
		}
		if got != "" {
			t.Errorf("%s outside the directory got the credential %q", p, got)
		}
	}
	// Dot segments that climb out of the directory are not sent at all
	// (TestDotSegmentsAreNeverSent), with or without the credential.
	for _, p := range []string{"/AcumaticaERP/../Other/collect", "/AcumaticaERP/%2e%2e/Other/collect", `/AcumaticaERP/..\Other\collect`} {
		if _, err := get(srv.URL + p); codeOf(err) != toolerr.InvalidArgument {
			t.Errorf("%s climbs out of the directory: %v", p, err)
		}
	}
	if _, err := get(srv.URL + "/AcumaticaERP/redirect-out"); codeOf(err) != toolerr.UpstreamInvalidResponse || !strings.Contains(err.Error(), "outside the site") {
		t.Errorf("redirect out of the directory: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if a, ok := seen["/Other/collect"]; ok && a != "" {
		t.Errorf("the redirect out of the directory carried %q", a)
	}
}

// FuzzSiteScope: whatever the path, a request the scope lets carry the
// credential resolves, as a server resolves dot segments and IIS's "\",
// to the virtual directory or below it.
func FuzzSiteScope(f *testing.F) {
	for _, p := range []string{"/AcumaticaERP/entity", "/AcumaticaERP/../x", "/AcumaticaERPX", `/AcumaticaERP\..\x`, "/AcumaticaERP/./a/../../b", "/acumaticaerp/a"} {
		f.Add(p)
	}
	scope := scopeOf(&url.URL{Scheme: "https", Host: "erp.example.com", Path: "/AcumaticaERP"})
	f.Fuzz(func(t *testing.T, p string) {
		u := &url.URL{Scheme: "https", Host: "erp.example.com", Path: p}
		if !scope.contains(u) {
			return
		}
		resolved := path.Clean("/" + strings.ReplaceAll(p, `\`, "/"))
		if resolved != "/AcumaticaERP" && !strings.HasPrefix(resolved, "/AcumaticaERP/") {
			t.Fatalf("%q carries the credential but resolves to %q", p, resolved)
		}
	})
}
