package outbound

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestDotSegmentsAreNeverSent: a name or key that a model chose (a Frappe
// document name, an Acumatica inquiry parameter) travels as one escaped
// path segment. If it is "." or "..", or holds "/../" (escaped as %2F, or
// with IIS's "\" separator), a server that decodes the path before
// resolving it, or a proxy in front of the ERP that cleans paths (Traefik's
// sanitizePath, nginx's proxy_pass with a URI, a mux that redirects to the
// cleaned path), reads another address on the site: a read tool's GET of
// /api/resource/Sales Invoice/<name> becomes a GET of /api/method/<rpc>.
// The transport refuses such a request, for a site at the web root as for
// one under a virtual directory, and the ERP sees nothing. Names with dots
// that are not whole segments still go.
func TestDotSegmentsAreNeverSent(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.RequestURI)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"data":{}}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, base := range []string{srv.URL, srv.URL + "/AcumaticaERP"} {
		site := siteFor(t, base)
		for _, tc := range []struct {
			name  string
			fresh bool // a write tool's client
		}{{"..", false}, {".", false}, {"../../method/frappe.client.delete", false}, {`..\..\method\frappe.client.delete`, false},
			{"A/../../../method/logout", false}, {"..", true},
			// Windows drops a segment's trailing dots and spaces.
			{"...", false}, {".. ", false}, {`... \..\method`, false}} {
			c := NewFactory(DefaultOptions()).ToolClient(site, bearer, connector.Read, nil)
			if tc.fresh {
				c = NewFactory(DefaultOptions()).ToolClient(site, bearer, connector.Write, nil)
			}
			target := site.URL("/api/resource/Sales%20Invoice/"+url.PathEscape(tc.name), nil)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if codeOf(WithoutURL(err)) != toolerr.InvalidArgument {
				t.Errorf("GET %s: err = %v, want INVALID_ARGUMENT", target, err)
			}
		}
		for _, name := range []string{"ACC-SINV-2025-00001", "v1.0", "..x", "x..", "A/B", "a.b/c.d", " "} {
			target := site.URL("/api/resource/Sales%20Invoice/"+url.PathEscape(name), nil)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			resp, err := NewFactory(DefaultOptions()).ToolClient(site, bearer, connector.Read, nil).Do(req)
			if err != nil {
				t.Errorf("GET %s: %v", target, err)
				continue
			}
			resp.Body.Close()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := 2 * 7; len(seen) != want {
		t.Errorf("the ERP got %d requests, want %d (the allowed names only): %q", len(seen), want, seen)
	}
}

// TestRedirectToADotSegmentIsTheERPs: a redirect whose Location keeps a
// dot segment in escaped form (which resolving the reference leaves alone)
// is not followed either, and the failure is the ERP's answer, not the
// call's arguments.
func TestRedirectToADotSegmentIsTheERPs(t *testing.T) {
	var hits sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		if r.URL.Path == "/api/resource/Customer/C1" {
			w.Header().Set("Location", "/api/resource/%2e%2e/method/frappe.client.get_count")
			w.WriteHeader(http.StatusFound)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	site := siteFor(t, srv.URL)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/api/resource/Customer/C1", nil), nil)
	resp, err := NewFactory(DefaultOptions()).ToolClient(site, bearer, connector.Read, nil).Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if codeOf(WithoutURL(err)) != toolerr.UpstreamInvalidResponse {
		t.Errorf("redirect to a dot segment: %v, want UPSTREAM_INVALID_RESPONSE", err)
	}
	hits.Range(func(k, _ any) bool {
		if k != "/api/resource/Customer/C1" {
			t.Errorf("the redirect was followed to %s", k)
		}
		return true
	})
}
