package frappe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// cleaningProxy is a reverse proxy in front of the simulator that, like
// Traefik's sanitizePath or nginx's proxy_pass with a URI, forwards the
// decoded request path with its dot segments resolved. It records every
// path it forwarded.
type cleaningProxy struct {
	*httptest.Server
	mu        sync.Mutex
	forwarded []string
}

func newCleaningProxy(t *testing.T, target string) *cleaningProxy {
	t.Helper()
	to, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &cleaningProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(to)
		clean := path.Clean(pr.In.URL.Path)
		pr.Out.URL.Path, pr.Out.URL.RawPath = clean, ""
		p.mu.Lock()
		p.forwarded = append(p.forwarded, clean)
		p.mu.Unlock()
	}}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func (p *cleaningProxy) paths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.forwarded...)
}

// TestNamesCannotStepToAnotherAddress: a document name comes from the
// model and travels in the URL path. A name that is "..", or holds
// "/../" (sent as ..%2F..), must not turn a read tool's GET of
// /api/resource/<doctype>/<name> into a GET of another of the ERP's
// addresses, such as an RPC method under /api/method, once a proxy in
// front of the ERP resolves the path. Such a name is refused before
// anything is sent; the ERP sees no request outside /api/resource.
func TestNamesCannotStepToAnotherAddress(t *testing.T) {
	s := testSim(t)
	proxy := newCleaningProxy(t, s.URL)
	u := s.User(allCompanies)
	auth := connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+u.APIKey+":"+u.APISecret)
		return nil
	})
	base, _ := url.Parse(proxy.URL)
	st := connector.Site{Slug: "proxied", Kind: Kind, DisplayName: "Proxied", BaseURL: base, Settings: []byte("{}")}
	run := func(tool string, args map[string]any) error {
		t.Helper()
		tl := toolByName(t, tool)
		raw, err := validArgs(t, tl, args)
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = tl.Handler(ctx, &connector.Call{Site: st, HTTP: factory.ToolClient(st, auth, tl.Effect, New()), Args: raw,
			Principal: connector.Principal{AuthType: "service_token", Subject: u.Email}, MaxRecords: 1000})
		return err
	}
	for _, name := range []string{"../../method/frappe.auth.get_logged_user", "..", `..\..\method\frappe.auth.get_logged_user`, "X/../../../method/frappe.client.get_count"} {
		if err := run("get_document", map[string]any{"doctype": "Sales Invoice", "name": name}); toolerr.Classify(err).Code != toolerr.InvalidArgument {
			t.Errorf("get_document %q: %v, want INVALID_ARGUMENT", name, err)
		}
		if err := run("fetch", map[string]any{"id": "Sales Invoice/" + name}); toolerr.Classify(err).Code != toolerr.InvalidArgument {
			t.Errorf("fetch %q: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	for _, p := range proxy.paths() {
		if !strings.HasPrefix(p, "/api/resource/Sales Invoice/") {
			t.Errorf("a read tool reached %s", p)
		}
	}
}
