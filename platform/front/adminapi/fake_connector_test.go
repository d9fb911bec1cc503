package adminapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// The one credential the fake ERP accepts, and who it authenticates as.
const (
	goodKey      = "good-key-7f3a"
	goodSecret   = "good-secret-91cd"
	fakeIdentity = "bot@acme.example"
)

// fakeERP is a connector of kind "fakeerp" with the same shape as Frappe:
// an api_key/api_secret credential, sent as "token key:secret", verified by
// asking the ERP who is logged in.
type fakeERP struct{}

var _ connector.Connector = fakeERP{}

func (fakeERP) Kind() string            { return "fakeerp" }
func (fakeERP) Tools() []connector.Tool { return nil }

// NormalizeSettings knows two settings, both defaulting to "".
func (fakeERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "settings must be a JSON object")
	}
	out := map[string]string{"company": "", "tenant": ""}
	for k, v := range in {
		if _, known := out[k]; !known {
			return nil, toolerr.New(toolerr.InvalidArgument, "unknown setting %s", toolerr.Quote(k))
		}
		s, ok := v.(string)
		if !ok {
			return nil, toolerr.New(toolerr.InvalidArgument, "setting %q must be a string", k)
		}
		out[k] = s
	}
	return json.Marshal(out)
}

func (fakeERP) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{
		{Name: "api_key", Description: "API key", Secret: true},
		{Name: "api_secret", Description: "API secret", Secret: true},
	}
}

func (fakeERP) APIAuthorizer(_ connector.Site, fields map[string]secrets.Secret) (connector.Authorizer, error) {
	header := "token " + fields["api_key"].Reveal() + ":" + fields["api_secret"].Reveal()
	return connector.AuthorizerFunc(func(req *http.Request) error {
		req.Header.Set("Authorization", header)
		return nil
	}), nil
}

func (fakeERP) VerifyAPICredential(ctx context.Context, site connector.Site, client *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL("/api/method/frappe.auth.get_logged_user", nil), nil)
	if err != nil {
		return "", toolerr.Wrap(toolerr.Internal, err, "could not build the request")
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", toolerr.Wrap(toolerr.UpstreamUnavailable, err, "could not reach the ERP")
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized, http.StatusForbidden:
		return "", toolerr.New(toolerr.AuthExpired, "the ERP rejected this API key and secret (HTTP %d)", resp.StatusCode)
	default:
		return "", toolerr.New(toolerr.UpstreamUnavailable, "the ERP answered HTTP %d", resp.StatusCode)
	}
	var body struct {
		Message string `json:"message"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "the ERP's answer is not JSON")
	}
	return body.Message, nil
}

// fakeUpstream is the ERP behind fakeERP. It accepts only goodKey and
// goodSecret and counts the requests it gets.
type fakeUpstream struct {
	*httptest.Server
	calls atomic.Int32
}

func newFakeUpstream(t *testing.T) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		if r.Method != http.MethodGet || r.URL.Path != "/api/method/frappe.auth.get_logged_user" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != fmt.Sprintf("token %s:%s", goodKey, goodSecret) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"exc_type":"AuthenticationError"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"message": fakeIdentity})
	}))
	t.Cleanup(u.Close)
	return u
}

// authorizingClient stands in for the outbound transport: it authorises
// every request with auth and sends it.
func authorizingClient(_ connector.Site, auth connector.Authorizer) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		if err := auth.Authorize(req); err != nil {
			return nil, err
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// jsonBody encodes v for a request body.
func jsonBody(t *testing.T, v any) *bytes.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// SiteRules: like Acumatica, the tenant tells sites at one origin apart.
func (fakeERP) SiteRules() connector.SiteRules {
	return connector.SiteRules{IdentityName: "tenant", Identity: func(settings json.RawMessage) string {
		var s map[string]string
		_ = json.Unmarshal(settings, &s)
		return s["tenant"]
	}}
}
