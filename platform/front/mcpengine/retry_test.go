package mcpengine

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/approval"
)

// effectERP has one tool per effect, each sending one request to the ERP
// with the method the ERP wants for it: a read that is a POST (a JSON-RPC
// API, an Acumatica inquiry action), and writes that are GETs.
type effectERP struct{}

func (effectERP) Kind() string                   { return "effecterp" }
func (effectERP) SiteRules() connector.SiteRules { return connector.SiteRules{} }
func (effectERP) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	return raw, nil
}
func (effectERP) APICredentialFields() []connector.CredentialField { return nil }
func (effectERP) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, nil
}
func (effectERP) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "bot", nil
}

func (effectERP) Tools() []connector.Tool {
	out := schema.Object(schema.Prop("value", schema.Any("")))
	tool := func(name string, effect connector.Effect, method string) connector.Tool {
		var preview func(context.Context, *connector.Call) (*connector.Preview, error)
		if effect != connector.Read {
			// The preview sends nothing: each write tool's one request
			// is its Handler's.
			preview = func(context.Context, *connector.Call) (*connector.Preview, error) {
				return &connector.Preview{Operation: "update", DocType: "Thing", Summary: "send " + name}, nil
			}
		}
		return connector.Tool{Name: name, Description: "Test tool.", Input: schema.Object(), Output: out, Effect: effect, Preview: preview,
			Handler: func(ctx context.Context, c *connector.Call) (any, error) {
				req, _ := http.NewRequestWithContext(ctx, method, c.Site.URL("/"+name, nil), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"read"}`))
				req.GetBody = func() (io.ReadCloser, error) {
					return io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"read"}`)), nil
				}
				resp, err := c.HTTP.Do(req)
				if err != nil {
					return nil, err
				}
				if resp.StatusCode != http.StatusOK {
					_ = resp.Body.Close()
					return nil, toolerr.New(toolerr.UpstreamUnavailable, "the ERP failed with HTTP %d", resp.StatusCode)
				}
				var v any
				if err := outbound.DecodeJSON(resp, &v); err != nil {
					return nil, err
				}
				return map[string]any{"value": v}, nil
			}}
	}
	return []connector.Tool{
		tool("read_by_post", connector.Read, http.MethodPost),
		tool("read_by_get", connector.Read, http.MethodGet),
		tool("write_by_get", connector.Write, http.MethodGet),
		tool("destroy_by_get", connector.Destructive, http.MethodGet),
		tool("write_by_post", connector.Write, http.MethodPost),
	}
}

// Issue 15 item 12: the transport retries by what the tool does, not by
// HTTP method. Each tool's first request gets a 503; a read tool's request
// is sent again whatever its method, a write or destructive tool's never.
// A write runs once approved (writes.go): each is proposed, approved in
// the store as its approver would on the page, and then called again.
func TestRetriesFollowTheToolsEffect(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		if r.Method == http.MethodPost && !strings.Contains(string(body), `"jsonrpc"`) {
			t.Errorf("%s %s sent again without its body: %q", r.Method, r.URL.Path, body)
		}
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(effectERP{})
	opts := outbound.DefaultOptions()
	opts.RetryBackoff = time.Millisecond
	base, _ := url.Parse(upstream.URL)
	site := connector.Site{ID: uuid.New(), Slug: "demo", Kind: "effecterp", BaseURL: base}
	eopts := Options{Registry: reg, Outbound: outbound.NewFactory(opts), Usage: &sink{}, Budget: 30 * time.Second}
	store, _ := withApprovals(t, &eopts, site)
	e, err := New(eopts)
	if err != nil {
		t.Fatal(err)
	}
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{site.ID: {WriteTools: []string{"write_by_get", "destroy_by_get", "write_by_post"},
		ServiceWrites: true, ServiceWriteApprover: boss}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, ClientID: "tok-1"})
	}))
	t.Cleanup(srv.Close)
	cs := (&fixture{url: srv.URL}).session(t)

	for _, c := range []struct {
		tool     string
		requests int
		ok       bool
	}{
		{"read_by_post", 2, true},
		{"read_by_get", 2, true},
		{"write_by_get", 1, false},
		{"destroy_by_get", 1, false},
		{"write_by_post", 1, false},
	} {
		res, m := call(t, cs, c.tool, nil)
		if c.requests == 1 {
			id := approvalOf(t, res, m)
			if _, err := store.Decide(t.Context(), site.ID, id, boss, true); err != nil {
				t.Fatal(err)
			}
			res, m = call(t, cs, c.tool, nil)
			if a, _ := store.Get(t.Context(), site.ID, id); a.Status != approval.Failed || a.ErrorCode != "UPSTREAM_UNAVAILABLE" {
				t.Errorf("%s: the failed write is stored as %s %s", c.tool, a.Status, a.ErrorCode)
			}
		}
		mu.Lock()
		n := hits["/"+c.tool]
		mu.Unlock()
		if n != c.requests || res.IsError == c.ok {
			t.Errorf("%s: %d requests to the ERP, isError=%v %v; want %d requests, success %v", c.tool, n, res.IsError, m, c.requests, c.ok)
		}
		if !c.ok && errCode(m) != "UPSTREAM_UNAVAILABLE" {
			t.Errorf("%s: %v, want UPSTREAM_UNAVAILABLE", c.tool, m)
		}
	}
}

// ownUnauthorizedERP is effectERP whose connector tells its ERP's own 401
// by its body.
type ownUnauthorizedERP struct{ effectERP }

const erpsOwn401 = `{"own":true}`

func (ownUnauthorizedERP) OwnUnauthorized(_ http.Header, body []byte) bool {
	return string(body) == erpsOwn401
}

// renewableToken is a caller's credential that renews after a 401.
type renewableToken struct {
	mu      sync.Mutex
	current string
}

func (a *renewableToken) Authorize(r *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Header.Set("Authorization", "Bearer "+a.current)
	return nil
}

func (a *renewableToken) RejectAuthorization(*http.Request) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.current += "-renewed"
	return true
}

// TestAWriteToolsRequestAnswered401FollowsItsConnector: the engine gives
// a write tool's call a client that renews the caller's credential and
// sends the request again after a 401 only when the tool's connector says
// the 401 is the ERP's own (connector.OwnUnauthorized). A proxy's 401,
// which may come after it forwarded the write, ends the call with the
// write sent once; the ERP's own is renewed and sent again. A read tool's
// request is sent again after any 401.
func TestAWriteToolsRequestAnswered401FollowsItsConnector(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	answer := ""
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		body := answer
		mu.Unlock()
		if !strings.HasSuffix(r.Header.Get("Authorization"), "-renewed") {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(ownUnauthorizedERP{})
	base, _ := url.Parse(upstream.URL)
	for _, c := range []struct {
		name, tool, answer string
		requests           int
		ok                 bool
	}{
		{"a write answered a proxy's 401", "write_by_post", `{"message":"Unauthorized"}`, 1, false},
		{"a write answered the ERP's own 401", "write_by_post", erpsOwn401, 2, true},
		{"a read answered a proxy's 401", "read_by_post", `{"message":"Unauthorized"}`, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			site := connector.Site{ID: uuid.New(), Slug: "demo", Kind: "effecterp", BaseURL: base}
			eopts := Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{}, Budget: 30 * time.Second}
			store, _ := withApprovals(t, &eopts, site)
			e, err := New(eopts)
			if err != nil {
				t.Fatal(err)
			}
			e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{site.ID: {WriteTools: []string{"write_by_post"}, ServiceWrites: true, ServiceWriteApprover: boss}}})
			auth := &renewableToken{current: "revoked-early"}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, ClientID: "tok-1", Authorizer: auth})
			}))
			defer srv.Close()
			cs := (&fixture{url: srv.URL}).session(t)
			mu.Lock()
			answer, hits = c.answer, map[string]int{}
			mu.Unlock()
			res, m := call(t, cs, c.tool, nil)
			if c.tool != "read_by_post" {
				id := approvalOf(t, res, m)
				if _, err := store.Decide(t.Context(), site.ID, id, boss, true); err != nil {
					t.Fatal(err)
				}
				res, m = call(t, cs, c.tool, nil)
			}
			mu.Lock()
			n := hits["/"+c.tool]
			mu.Unlock()
			if n != c.requests || res.IsError == c.ok {
				t.Errorf("%d requests to the ERP, isError=%v %v; want %d requests, success %v", n, res.IsError, m, c.requests, c.ok)
			}
		})
	}
}
