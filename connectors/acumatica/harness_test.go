package acumatica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/inmemory"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// userKind is one kind of caller the tests run every tool as.
type userKind struct {
	name    string
	role    string // the simulator's role of the user
	service bool   // a service connection (api_token) rather than a signed-in user
}

// The simulator's users with different rights, and the service user.
var (
	kindFull     = userKind{name: "full", role: acumaticatest.RoleFull}
	kindNoAR     = userKind{name: "no-ar", role: acumaticatest.RoleNoAR}
	kindNoCanary = userKind{name: "no-canary", role: acumaticatest.RoleNoCanary}
	kindService  = userKind{name: "service", role: acumaticatest.RoleService, service: true}
	// kindSalesViewer reads everything but may not save sales orders.
	kindSalesViewer = userKind{name: "sales-viewer", role: acumaticatest.RoleSalesViewer}
	userKinds       = []userKind{kindFull, kindNoAR, kindNoCanary, kindService}
)

// harness runs tool handlers against a simulator the way the engine does:
// inputs validated against the input schema, an outbound client that
// authorises as the caller, the site's shared cache and index, and the
// result encoded, decoded (numbers as json.Number) and validated against
// the output schema.
type harness struct {
	t       *testing.T
	sim     *acumaticatest.Simulator
	srv     *httptest.Server
	conn    *Connector
	out     *outbound.Factory
	site    connector.Site
	storage *inmemory.SiteStorage
	tools   map[string]connector.Tool
	// ahead moves the storage's clock (cache and index expiry) forward.
	ahead atomic.Int64

	// tokMu guards tokens; it is held while signing in, so it is not mu,
	// which the server side takes.
	tokMu  sync.Mutex
	tokens map[string]secrets.Secret
	mu     sync.Mutex
	// seen records every request's credentials, to check that nothing but
	// a Bearer header is ever sent.
	cookies  []string
	nonBeare []string
	// grants are the token requests' grant types and scopes.
	grants []url.Values
	// fields, when set, is the service connection instead of the service
	// user's current credentials (a password changed on the ERP after the
	// connection was saved).
	fields map[string]secrets.Secret
	// erp, when set, answers a request in the simulator's place (an ERP
	// that answers as no real one does) when it returns true.
	erp func(w http.ResponseWriter, r *http.Request) bool
}

type harnessOptions struct {
	sim      acumaticatest.Options
	settings string
	tokens   connector.ServiceTokenStore
	// noRetry turns off the transport's single retry of retryable reads, so
	// a test of a 429 does not wait for it.
	noRetry bool
}

func newHarness(t *testing.T, opts harnessOptions) *harness {
	t.Helper()
	h := &harness{t: t, tokens: map[string]secrets.Secret{}}
	h.sim = acumaticatest.NewHandler(opts.sim)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.Header.Get("Cookie"); c != "" {
			h.mu.Lock()
			h.cookies = append(h.cookies, r.URL.Path)
			h.mu.Unlock()
		}
		if a := r.Header.Get("Authorization"); a != "" && !strings.HasPrefix(a, "Bearer ") {
			h.mu.Lock()
			h.nonBeare = append(h.nonBeare, r.URL.Path)
			h.mu.Unlock()
		}
		if r.URL.Path == h.sim.PathPrefix()+"/identity/connect/token" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			form, _ := url.ParseQuery(string(body))
			form.Del("password")
			form.Del("client_secret")
			h.mu.Lock()
			h.grants = append(h.grants, form)
			h.mu.Unlock()
		}
		if h.erp != nil && h.erp(w, r) {
			return
		}
		h.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.sim.Close()
		h.srv.Close()
		h.mu.Lock()
		defer h.mu.Unlock()
		if len(h.cookies) > 0 {
			t.Errorf("requests sent cookies: %v", h.cookies)
		}
		if len(h.nonBeare) > 0 {
			t.Errorf("requests sent non-Bearer authorization: %v", h.nonBeare)
		}
	})
	h.out = outbound.NewFactory(outbound.Options{MaxResponseBytes: 8 << 20, Retry: !opts.noRetry})
	h.conn = New(Options{HTTPClient: h.out.Client, ServiceTokens: opts.tokens})
	settings := opts.settings
	if settings == "" {
		settings = `{"tenant":"Demo"}`
	}
	norm, err := h.conn.NormalizeSettings(json.RawMessage(settings))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(h.srv.URL + h.sim.PathPrefix())
	h.site = connector.Site{ID: uuid.New(), Slug: "demo", Kind: Kind, DisplayName: "Demo", BaseURL: base, Settings: norm}
	h.storage = inmemory.NewSiteStorage(func() time.Time { return time.Now().Add(time.Duration(h.ahead.Load())) })
	h.tools = map[string]connector.Tool{}
	for _, tool := range h.conn.Tools() {
		h.tools[tool.Name] = tool
	}
	return h
}

// serviceFields are the service connection of the simulator's API user.
// answerAt makes the ERP answer every request whose path ends in suffix
// with body, of contentType, in place of the simulator.
func (h *harness) answerAt(suffix, contentType, body string) {
	h.erp = func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, suffix) {
			return false
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(body))
		return true
	}
}

func (h *harness) serviceFields() map[string]secrets.Secret {
	if h.fields != nil {
		return h.fields
	}
	u := h.sim.User(acumaticatest.RoleService)
	return map[string]secrets.Secret{
		"client_id":     secrets.Secret(acumaticatest.DefaultServiceClientGUID + "@" + h.sim.Tenant()),
		"client_secret": acumaticatest.DefaultServiceSecret,
		"username":      secrets.Secret(u.Username),
		"password":      secrets.Secret(u.Password),
	}
}

// userToken signs the user of a role in once (password grant through the
// simulator's service client, which any licensed user may use).
func (h *harness) userToken(role string) secrets.Secret {
	h.tokMu.Lock()
	defer h.tokMu.Unlock()
	if tok, ok := h.tokens[role]; ok {
		return tok
	}
	u := h.sim.User(role)
	cred := serviceCredential{client: connector.OAuthClient{ID: acumaticatest.DefaultServiceClientGUID + "@" + h.sim.Tenant(), Secret: acumaticatest.DefaultServiceSecret},
		username: u.Username, password: secrets.Secret(u.Password)}
	tok, err := passwordGrant(context.Background(), h.site, cred, h.out.Client(h.site, nil))
	if err != nil {
		h.t.Fatalf("sign in %s: %v", u.Username, err)
	}
	h.tokens[role] = tok.AccessToken
	return tok.AccessToken
}

// newCall builds the call a handler gets for kind.
func (h *harness) newCall(kind userKind, rawArgs []byte) *connector.Call {
	var auth connector.Authorizer
	principal := connector.Principal{AuthType: "oauth", Subject: h.sim.User(kind.role).Username + "@" + h.sim.Tenant()}
	if kind.service {
		a, err := h.conn.APIAuthorizer(h.site, h.serviceFields())
		if err != nil {
			h.t.Fatal(err)
		}
		auth, principal = a, connector.Principal{AuthType: "service_token"}
	} else {
		auth = OAuth{}.TokenAuthorizer(h.userToken(kind.role))
	}
	return &connector.Call{Site: h.site, HTTP: h.out.Client(h.site, auth), Args: rawArgs, Principal: principal,
		MaxRecords: 1000, Cache: h.storage.Cache(h.site.ID), Index: h.storage.SchemaIndex(h.site.ID)}
}

// run calls a tool as kind and returns its result as decoded JSON.
func (h *harness) run(kind userKind, tool string, args map[string]any) (map[string]any, error) {
	h.t.Helper()
	return h.runCall(tool, func(raw []byte) *connector.Call { return h.newCall(kind, raw) }, args)
}

func (h *harness) runCall(tool string, mk func([]byte) *connector.Call, args map[string]any) (map[string]any, error) {
	h.t.Helper()
	t, ok := h.tools[tool]
	if !ok {
		h.t.Fatalf("no tool %s", tool)
	}
	if args == nil {
		args = map[string]any{}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := validate(t.Input, raw); err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "input schema: %v", err)
	}
	call := mk(raw)
	if t.Preview != nil && call.Approved == nil {
		// As the engine does: the preview first, as the caller; the
		// handler runs with the approved preview.
		p, err := t.Preview(context.Background(), mk(raw))
		if err != nil {
			return nil, err
		}
		call.Approved = &connector.Approved{ID: uuid.NewString(), Preview: *p, By: call.Principal.Subject}
	}
	out, err := t.Handler(context.Background(), call)
	if err != nil {
		return nil, err
	}
	enc, err := json.Marshal(out)
	if err != nil {
		h.t.Fatalf("%s: encode result: %v", tool, err)
	}
	if err := validate(t.Output, enc); err != nil {
		h.t.Errorf("%s: result does not match the output schema: %v\n%s", tool, err, truncate(enc))
	}
	dec := json.NewDecoder(bytes.NewReader(enc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		h.t.Fatalf("%s: result is not an object: %v", tool, err)
	}
	return m, nil
}

// mustRun is run that fails the test on error.
func (h *harness) mustRun(kind userKind, tool string, args map[string]any) map[string]any {
	h.t.Helper()
	m, err := h.run(kind, tool, args)
	if err != nil {
		h.t.Fatalf("%s as %s: %v", tool, kind.name, err)
	}
	return m
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// validate checks JSON against a tool schema, as the engine does.
func validate(s *schema.Schema, raw []byte) error { return connectortest.Validate(s, raw) }

// codeOf returns an error's tool error code.
func codeOf(err error) toolerr.Code {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

// wantCode fails unless err has code.
func wantCode(t *testing.T, err error, code toolerr.Code, what string) *toolerr.Error {
	t.Helper()
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("%s: err = %v, want %s", what, err, code)
	}
	return te
}

// grantsOf returns the token requests of one grant type so far.
func (h *harness) grantsOf(grantType string) []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []url.Values
	for _, g := range h.grants {
		if g.Get("grant_type") == grantType {
			out = append(out, g)
		}
	}
	return out
}

// putInERP does what a user does on Acumatica's screens, outside erpgate:
// a contract-API PUT of entity with fields (plain values, wrapped as the
// API takes them) as kind, under condition ("If-Match" updates a record
// that exists, "If-None-Match" inserts a new one, "" either). It returns
// the HTTP status.
func (h *harness) putInERP(kind userKind, entity string, fields map[string]any, condition string) int {
	h.t.Helper()
	wrapped := map[string]any{}
	for k, v := range fields {
		wrapped[k] = map[string]any{"value": v}
	}
	body, err := json.Marshal(wrapped)
	if err != nil {
		h.t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPut, h.site.BaseURL.String()+"/entity/Default/24.200.001/"+entity, bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if condition != "" {
		req.Header.Set(condition, "*")
	}
	resp, err := h.newCall(kind, nil).HTTP.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
