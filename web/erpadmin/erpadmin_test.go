package erpadmin_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/web/erpadmin"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// rig is an erpgate-like server with one purpose, "test", whose targets
// are the simulator and its OAuth client, and whose Done writes what it
// got.
type rig struct {
	base   string
	sim    *frappetest.Server
	svc    *erpadmin.Service
	client frappetest.OAuthClient
	now    time.Time
	mu     sync.Mutex
	// targets counts Target calls; gone makes Target fail.
	targets int
	gone    bool
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func newRig(t *testing.T) *rig {
	t.Helper()
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	rg := &rig{base: base, sim: sim, now: time.Now()}
	rg.client = frappetest.OAuthClient{ID: "regclient01", Secret: "regsecret01",
		RedirectURIs: []string{base + "/oauth/callback"}, SkipAuthorization: true}
	sim.PutClient(rg.client)
	reg := connector.NewRegistry()
	reg.MustRegister(frappe.New())
	out := outbound.NewFactory(outbound.Options{})
	rg.svc = erpadmin.New(erpadmin.Deps{
		Pool: pgtest.NewPool(t), Keyring: newKeyring(t), Registry: reg, HTTPClient: out.Client,
		PublicBaseURL: base, Now: rg.clock,
	})
	simURL, _ := url.Parse(sim.URL)
	target := func(ctx context.Context, ref string) (erpadmin.Target, error) {
		rg.mu.Lock()
		defer rg.mu.Unlock()
		rg.targets++
		if rg.gone {
			return erpadmin.Target{}, errTargetGone
		}
		return erpadmin.Target{Kind: "frappe", Site: connector.Site{ID: uuid.Nil, Slug: "pending", Kind: "frappe", BaseURL: simURL},
			Client: connector.OAuthClient{ID: rg.client.ID, Secret: secrets.Secret(rg.client.Secret)}, CallbackPath: "/oauth/callback"}, nil
	}
	done := func(w http.ResponseWriter, r *http.Request, ref string, p erpadmin.Proof, err error) {
		fmt.Fprintf(w, "done ref=%q user=%q admin=%v evidence=%q err=%v gone=%v", ref, p.User.ID, p.Check.Admin, p.Check.Evidence, err, errors.Is(err, errTargetGone))
	}
	rg.svc.Handle(erpadmin.Purpose{Name: "test", Target: target, Done: done})
	rg.svc.Handle(erpadmin.Purpose{Name: "identity", IdentityOnly: true, Target: target, Done: done})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /begin", func(w http.ResponseWriter, r *http.Request) {
		purpose := "test"
		if p := r.URL.Query().Get("purpose"); p != "" {
			purpose = p
		}
		if err := rg.svc.Begin(w, r, purpose, r.URL.Query().Get("ref")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	callback := func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Query().Get("state"), erpadmin.StatePrefix) {
			http.Error(w, "authorization server", http.StatusTeapot)
			return
		}
		rg.svc.ServeCallback(w, r)
	}
	mux.HandleFunc("GET /oauth/callback", callback)
	mux.HandleFunc("GET /sites/{slug}/oauth/callback", callback)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rg
}

var errTargetGone = errors.New("the registration is gone")

// newKeyring is a keyring of one fresh key.
func newKeyring(t *testing.T) *secrets.Keyring {
	t.Helper()
	spec, err := secrets.GenerateKeySpec("t1")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func userWithRole(t *testing.T, sim *frappetest.Server, role string) frappetest.User {
	t.Helper()
	for _, u := range sim.Users() {
		if u.Role == role {
			return u
		}
	}
	t.Fatalf("no %s user", role)
	return frappetest.User{}
}

// browser is a cookie-keeping client that stops before erpgate's
// callback, so a test holds the callback URL.
type browser struct {
	t  *testing.T
	hc *http.Client
}

func newBrowser(t *testing.T, rg *rig) *browser {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), rg.base+"/oauth/callback") {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return &browser{t: t, hc: hc}
}

func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// signIn begins a proof and signs user in at the simulator, returning the
// callback URL the ERP sent the browser to.
func (b *browser) signIn(rg *rig, ref string, user frappetest.User) string {
	b.t.Helper()
	return b.signInFor(rg, "test", ref, user)
}

// signInFor is signIn for purpose.
func (b *browser) signInFor(rg *rig, purpose, ref string, user frappetest.User) string {
	b.t.Helper()
	resp, _ := b.get(rg.base + "/begin?" + url.Values{"purpose": {purpose}, "ref": {ref}}.Encode())
	if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, rg.base+"/oauth/callback?") {
		return loc // still signed in at the ERP
	}
	if resp.Request.URL.Path != "/login" {
		b.t.Fatalf("begin ended at %s, not the ERP's login", resp.Request.URL)
	}
	form := url.Values{"usr": {user.Email}, "pwd": {user.Password}, "redirect-to": {resp.Request.URL.Query().Get("redirect-to")}}
	resp, err := b.hc.PostForm(rg.sim.URL+"/login", form)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, rg.base+"/oauth/callback?") {
		b.t.Fatalf("the ERP sent the browser to %q (status %d), not the callback", loc, resp.StatusCode)
	}
	return loc
}

func TestProofOfAnAdministrator(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb := b.signIn(rg, "reg-1", admin)
	cbURL, _ := url.Parse(cb)
	if !strings.HasPrefix(cbURL.Query().Get("state"), erpadmin.StatePrefix) {
		t.Fatalf("state %q lacks the prefix", cbURL.Query().Get("state"))
	}
	_, body := b.get(cb)
	want := fmt.Sprintf("done ref=%q user=%q admin=true", "reg-1", admin.Email)
	if !strings.HasPrefix(body, want) || !strings.Contains(body, "err=<nil>") {
		t.Fatalf("got %q, want %q", body, want)
	}
}

func TestProofOfANonAdministrator(t *testing.T) {
	rg := newRig(t)
	clerk := userWithRole(t, rg.sim, "all-companies")
	b := newBrowser(t, rg)
	_, body := b.get(b.signIn(rg, "reg-2", clerk))
	want := fmt.Sprintf("done ref=%q user=%q admin=false", "reg-2", clerk.Email)
	if !strings.HasPrefix(body, want) || !strings.Contains(body, "err=<nil>") {
		t.Fatalf("got %q, want %q and no error", body, want)
	}
}

// An identity-only purpose (the approval page) identifies whoever signs
// in, administrator or not, and never asks the administrator check: the
// proof carries the zero AdminCheck, so nothing can read an
// administrator's answer into it.
func TestIdentityOnlyProof(t *testing.T) {
	rg := newRig(t)
	for _, role := range []string{"all-companies", "administrator"} {
		user := userWithRole(t, rg.sim, role)
		b := newBrowser(t, rg)
		_, body := b.get(b.signInFor(rg, "identity", "act-"+role, user))
		want := fmt.Sprintf(`done ref=%q user=%q admin=false evidence="" err=<nil>`, "act-"+role, user.Email)
		if !strings.HasPrefix(body, want) {
			t.Errorf("%s: got %q, want %q", role, body, want)
		}
	}
	// Its states are as single-use as any other's.
	user := userWithRole(t, rg.sim, "all-companies")
	b := newBrowser(t, rg)
	cb := b.signInFor(rg, "identity", "act-replay", user)
	b.get(cb)
	if resp, body := b.get(cb); resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "done ref") {
		t.Fatalf("replayed identity sign-in: %d %q", resp.StatusCode, body)
	}
}

// Attack: the callback URL replayed (a second request with the same state
// and code, from the same browser) gets nothing.
func TestProofStateIsSingleUse(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb := b.signIn(rg, "reg-3", admin)
	if _, body := b.get(cb); !strings.Contains(body, "admin=true") {
		t.Fatalf("first use: %q", body)
	}
	resp, body := b.get(cb)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "done ref") || !strings.Contains(body, "This sign-in cannot be finished") {
		t.Fatalf("replay answered %d %q", resp.StatusCode, body)
	}
}

// Attack: the callback URL opened in another browser (a leaked URL, or a
// victim lured to finish the attacker's sign-in) proves nothing, and the
// sign-in is spent for its own browser too.
func TestProofFromAnotherBrowserIsRefusedAndSpent(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	owner := newBrowser(t, rg)
	cb := owner.signIn(rg, "reg-4", admin)
	other := newBrowser(t, rg)
	_, body := other.get(cb)
	if !strings.HasPrefix(body, `done ref="" user="" admin=false evidence="" err=`+erpadmin.ErrState.Error()) {
		t.Fatalf("another browser got %q", body)
	}
	_, body = owner.get(cb)
	if !strings.Contains(body, "This sign-in cannot be finished") {
		t.Fatalf("the owner's browser, after the other one, got %q", body)
	}
	// A browser with a forged binding cookie of the right shape fares no
	// better.
	cb = owner.signIn(rg, "reg-4b", admin)
	forged := newBrowser(t, rg)
	u, _ := url.Parse(rg.base)
	forged.hc.Jar.SetCookies(u, []*http.Cookie{{Name: "erpgate_erpadmin", Value: "egb_" + strings.Repeat("A", 43)}})
	if _, body = forged.get(cb); !strings.Contains(body, "err="+erpadmin.ErrState.Error()) {
		t.Fatalf("a forged cookie got %q", body)
	}
}

// An expired sign-in proves nothing, even in its own browser.
func TestProofExpires(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb := b.signIn(rg, "reg-5", admin)
	rg.advance(10*time.Minute + time.Second)
	_, body := b.get(cb)
	if !strings.HasPrefix(body, `done ref="reg-5" user="" admin=false evidence="" err=`+erpadmin.ErrState.Error()) {
		t.Fatalf("expired sign-in got %q", body)
	}
	// One never finished is swept once expired.
	b.signIn(rg, "reg-5b", admin)
	if n, err := rg.svc.Sweep(t.Context()); err != nil || n != 0 {
		t.Fatalf("sweep before expiry: %d, %v", n, err)
	}
	rg.advance(10*time.Minute + time.Second)
	if n, err := rg.svc.Sweep(t.Context()); err != nil || n != 1 {
		t.Fatalf("sweep after expiry: %d, %v", n, err)
	}
}

// Attack: states that erpgate did not make (the prefix alone, a guessed
// value, a state of the right shape) reach no purpose.
func TestForgedStatesReachNoPurpose(t *testing.T) {
	rg := newRig(t)
	b := newBrowser(t, rg)
	for _, state := range []string{erpadmin.StatePrefix, erpadmin.StatePrefix + "x", erpadmin.StatePrefix + strings.Repeat("A", 43), erpadmin.StatePrefix + strings.Repeat("A", 5000)} {
		resp, body := b.get(rg.base + "/oauth/callback?" + url.Values{"state": {state}, "code": {"abc"}}.Encode())
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "done ref") {
			t.Errorf("state %.20q: %d %q", state, resp.StatusCode, body)
		}
	}
	if rg.targets != 0 {
		t.Errorf("forged states reached Target %d times", rg.targets)
	}
}

// The person cancels at the ERP; the ERP refuses the client.
func TestProofCancelledOrClientRefused(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb, _ := url.Parse(b.signIn(rg, "reg-6", admin))
	q := url.Values{"state": {cb.Query().Get("state")}, "error": {"access_denied"}}
	if _, body := b.get(rg.base + "/oauth/callback?" + q.Encode()); !strings.Contains(body, "err="+erpadmin.ErrCancelled.Error()) {
		t.Fatalf("cancelled: %q", body)
	}
	// A code the ERP refuses (as after a wrong client): the exchange
	// fails with the ERP's invalid_grant.
	cb, _ = url.Parse(b.signIn(rg, "reg-7", admin))
	q = url.Values{"state": {cb.Query().Get("state")}, "code": {"not-the-code"}}
	if _, body := b.get(rg.base + "/oauth/callback?" + q.Encode()); !strings.Contains(body, "err="+erpadmin.ErrClientRefused.Error()) {
		t.Fatalf("refused code: %q", body)
	}
}

// The target is gone by the time the ERP sends the browser back (an
// expired registration): Done learns both.
func TestProofTargetGone(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb := b.signIn(rg, "reg-8", admin)
	rg.mu.Lock()
	rg.gone = true
	rg.mu.Unlock()
	if _, body := b.get(cb); !strings.Contains(body, "gone=true") || !strings.Contains(body, erpadmin.ErrState.Error()) {
		t.Fatalf("target gone: %q", body)
	}
}

// An ERP that stopped answering between the sign-in and the exchange.
func TestProofERPUnreachable(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb := b.signIn(rg, "reg-9", admin)
	rg.sim.Close()
	if _, body := b.get(cb); !strings.Contains(body, "err="+erpadmin.ErrUnreachable.Error()) {
		t.Fatalf("unreachable: %q", body)
	}
}

// TestACodeBackAtAnotherRedirectURIIsNotExchanged is the mix-up attack on
// a proof: an attacker's ERP sends the person on to another ERP, which
// sends its code back at that ERP's own redirect URI with this proof's
// state. The code must not reach the target's ERP (the attacker's), and
// the sign-in ends.
func TestACodeBackAtAnotherRedirectURIIsNotExchanged(t *testing.T) {
	rg := newRig(t)
	admin := userWithRole(t, rg.sim, "administrator")
	b := newBrowser(t, rg)
	cb, err := url.Parse(b.signIn(rg, "reg-mixup", admin))
	if err != nil {
		t.Fatal(err)
	}
	before := rg.sim.RequestCount("/api/method/frappe.integrations.oauth2.get_token")
	elsewhere := rg.base + "/sites/another/oauth/callback?" + cb.RawQuery
	if _, body := b.get(elsewhere); !strings.Contains(body, "err="+erpadmin.ErrState.Error()) {
		t.Fatalf("a code back at another site's redirect URI: %s", body)
	}
	if n := rg.sim.RequestCount("/api/method/frappe.integrations.oauth2.get_token") - before; n != 0 {
		t.Fatalf("the code went to the target's token endpoint %d time(s)", n)
	}
	// The state is spent: the same answer at the right redirect URI is
	// refused too.
	if resp, body := b.get(cb.String()); resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "done ref=") {
		t.Fatalf("the state was used again: HTTP %d %s", resp.StatusCode, body)
	}
}
