package frappe

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
)

// TestERPRequestErrorsNameNoQueryOrUserInfo: the errors Frappe's calls
// return (a tool's, the credential check's) go to the operator's log and
// pages. The outbound client's error names the request's URL with its
// query (a list's filters and fields) and, for a redirect it refused, the
// ERP's Location as written, user info and query included (here echoing
// the API key). Both are named by scheme, host and path only.
func TestERPRequestErrorsNameNoQueryOrUserInfo(t *testing.T) {
	const apiKey, apiSecret = "k3y-Redirect-Marker", "s3cret-Redirect-Marker"
	const password = "pw-Location-Marker"
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "https://erp:"+password+"@sso.elsewhere.example/login?key="+apiKey)
		w.WriteHeader(http.StatusFound)
	}))
	t.Cleanup(redirecting.Close)
	// An ERP that takes the request and drops the connection.
	dropping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
	}))
	t.Cleanup(dropping.Close)

	auth := connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+apiKey+":"+apiSecret)
		return nil
	})
	for _, tc := range []struct {
		name, server, names string
	}{
		{"refused redirect", redirecting.URL, "https://sso.elsewhere.example/login"},
		{"dropped connection", dropping.URL, "/api/"},
	} {
		base, _ := url.Parse(tc.server)
		st := connector.Site{Slug: "moved", Kind: Kind, DisplayName: "Moved", BaseURL: base, Settings: []byte("{}")}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, verr := (&Connector{}).VerifyAPICredential(ctx, st, factory.Client(st, auth))
		tl := toolByName(t, "list_customers")
		raw, err := validArgs(t, tl, map[string]any{"customer_group": "Commercial"})
		if err != nil {
			t.Fatal(err)
		}
		_, terr := tl.Handler(ctx, &connector.Call{Site: st, HTTP: factory.ToolClient(st, auth, tl.Effect, New()), Args: raw,
			Principal: connector.Principal{AuthType: "service_token"}, MaxRecords: 1000})
		cancel()
		for what, err := range map[string]error{"credential check": verr, "tool call": terr} {
			if err == nil {
				t.Fatalf("%s, %s: no error", tc.name, what)
			}
			text := err.Error()
			for _, s := range []string{apiKey, apiSecret, password, "Commercial", "limit_page_length"} {
				if strings.Contains(text, s) {
					t.Errorf("%s, %s: the error carries %q: %s", tc.name, what, s, text)
				}
			}
			if !strings.Contains(text, tc.names) {
				t.Errorf("%s, %s: the error does not name %s: %s", tc.name, what, tc.names, text)
			}
		}
	}
}
