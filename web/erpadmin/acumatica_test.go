package erpadmin_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
)

// acuRig asks an Acumatica simulator again, as the owner's page does:
// a site of it registered with an OAuth client, and ERP tokens kept as
// an owner's sign-in keeps them.
type acuRig struct {
	sim    *acumaticatest.Server
	pool   *pgxpool.Pool
	ring   *secrets.Keyring
	reg    *connector.Registry
	conn   *acumatica.Connector
	out    *outbound.Factory
	svc    *erpadmin.Service
	tokens *pagesession.Tokens
	site   sites.Site
	client connector.OAuthClient
}

const acuRedirect = "https://gateway.example/sites/acu/oauth/callback"

func newAcuRig(t *testing.T, opts acumaticatest.Options) *acuRig {
	t.Helper()
	r := &acuRig{sim: acumaticatest.NewServer(opts), pool: pgtest.NewPool(t), ring: newKeyring(t), reg: connector.NewRegistry(),
		out: outbound.NewFactory(outbound.Options{})}
	t.Cleanup(r.sim.Close)
	r.conn = acumatica.New(acumatica.Options{HTTPClient: r.out.Client})
	r.reg.MustRegister(r.conn)
	r.svc = r.replica()
	r.tokens = pagesession.NewTokens(r.pool, r.ring)
	site, err := sites.NewStore(r.pool, r.ring).CreateSite(t.Context(), sites.NewSite{Slug: "acu", Kind: "acumatica", DisplayName: "Acu",
		BaseURL: r.sim.URL, Settings: json.RawMessage(`{"tenant":"` + r.sim.Tenant() + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	r.site = site
	c := r.sim.RegisterClient(acuRedirect)
	r.client = connector.OAuthClient{ID: c.ID, Secret: secrets.Secret(c.Secret)}
	return r
}

// clientOf is the rig's OAuth client, as the owner's page finds it.
func (r *acuRig) clientOf(context.Context) (connector.OAuthClient, error) { return r.client, nil }

// replica is another erpadmin service on the rig's database, as another
// replica of erpgate has.
func (r *acuRig) replica() *erpadmin.Service {
	return erpadmin.New(erpadmin.Deps{Pool: r.pool, Keyring: r.ring, Registry: r.reg, HTTPClient: r.out.Client,
		PublicBaseURL: "http://127.0.0.1:1"})
}

// admin is the simulator's one administrator.
func (r *acuRig) admin(t *testing.T) acumaticatest.User {
	t.Helper()
	for _, u := range r.sim.Users() {
		if u.IsAdministrator() {
			return u
		}
	}
	t.Fatal("the simulator has no administrator")
	return acumaticatest.User{}
}

// signIn walks u's authorization-code sign-in at the simulator with the
// rig's client, as erpgate's owner sign-in does, and returns the ERP's
// token answer.
func (r *acuRig) signIn(t *testing.T, u acumaticatest.User) connector.UpstreamToken {
	t.Helper()
	csite, err := r.site.Connector()
	if err != nil {
		t.Fatal(err)
	}
	verifier := strings.Repeat("verifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	authURL, err := r.conn.AuthorizationURL(csite, r.client, connector.AuthorizationRequest{
		RedirectURI: acuRedirect, State: "st", CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := acumaticatest.CompleteAuthorization(nil, authURL, u.Username, u.Password)
	if err != nil {
		t.Fatalf("sign in %s: %v", u.Username, err)
	}
	tok, err := r.conn.ExchangeCode(t.Context(), csite, r.client, r.out.Client(csite, nil), loc.Query().Get("code"), acuRedirect, verifier)
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	return tok
}

// id is u's ERP user id as a sign-in learns it: Acumatica's OIDC subject.
func (r *acuRig) id(u acumaticatest.User) string { return u.Username + "@" + r.sim.Tenant() }

// keep keeps tok's access token under key as u's.
func (r *acuRig) keep(t *testing.T, key string, u acumaticatest.User, tok connector.UpstreamToken) {
	t.Helper()
	if err := r.tokens.Keep(t.Context(), r.site.ID, key, r.id(u), tok.AccessToken, time.Now().Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// Acumatica answers a token whose user's password was changed since with
// HTTP 500 and PXLogin's "Invalid credentials" (shared/erp-api/acumatica
// api-facts.md §3): the ERP refused the sign-in, which ends the owner's
// session like a 401, not an outage that keeps it. Another 500 is still
// an ERP that could not be asked.
func TestAskAgainTakesAcumaticasInvalidCredentialsAsARefusedToken(t *testing.T) {
	r := newAcuRig(t, acumaticatest.Options{})
	ctx := t.Context()
	admin := r.admin(t)
	r.keep(t, "owner", admin, r.signIn(t, admin))
	if v := r.svc.AskAgain(ctx, r.tokens, r.site, "owner", r.id(admin), r.clientOf); v.Kind != erpadmin.VerdictAdmin {
		t.Fatalf("before anything changed: verdict %d (%v), want an administrator (%s)", v.Kind, v.Err, v.Evidence)
	}

	r.sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/" + r.sim.Tenant() + "/api/odata/gi/", Times: 1, Status: 500,
		Body: `{"message":"An error has occurred.","exceptionMessage":"Object reference not set to an instance of an object.","exceptionType":"System.NullReferenceException"}`})
	if v := r.svc.AskAgain(ctx, r.tokens, r.site, "owner", r.id(admin), r.clientOf); v.Kind != erpadmin.VerdictUnreachable {
		t.Errorf("another HTTP 500: verdict %d (%v), want the ERP unreachable", v.Kind, v.Err)
	}

	r.sim.ChangePassword(admin.Username, "a-new-password-1")
	if v := r.svc.AskAgain(ctx, r.tokens, r.site, "owner", r.id(admin), r.clientOf); v.Kind != erpadmin.VerdictTokenRefused {
		t.Errorf("after the password changed (HTTP 500 Invalid credentials): verdict %d (%v), want the token refused", v.Kind, v.Err)
	}
}

// simClock is a simulator's clock the test moves.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// keepSignIn keeps what u's sign-in gave under key, as the owner's page
// keeps a proof's tokens.
func (r *acuRig) keepSignIn(t *testing.T, key string, u acumaticatest.User, tok connector.UpstreamToken) {
	t.Helper()
	proof := erpadmin.Proof{Token: tok.AccessToken, Refresh: tok.RefreshToken, Expires: time.Now().Add(tok.ExpiresIn)}
	if err := r.tokens.KeepTokens(t.Context(), r.site.ID, key, r.id(u), proof.Tokens(), time.Now().Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
}

// An Acumatica whose access tokens last 10 minutes, shorter than an owner
// session: the owner's first change after that renews the kept token with
// the refresh token of their sign-in (once, though two replicas ask at the
// same moment: Acumatica's refresh tokens die on use) and goes on; the
// renewed pair is kept, so the next change needs no refresh. Only a
// refresh the ERP refuses signs them out; a token endpoint that fails for
// now is an ERP that could not be asked.
func TestAskAgainRenewsAnExpiredTokenOnceAcrossReplicas(t *testing.T) {
	clock := &simClock{now: acumaticatest.DefaultNow}
	r := newAcuRig(t, acumaticatest.Options{Now: clock.Now, TokenLifetime: 10 * time.Minute})
	ctx := t.Context()
	admin := r.admin(t)
	r.keepSignIn(t, "owner", admin, r.signIn(t, admin))
	ask := func(svc *erpadmin.Service, tokens *pagesession.Tokens) erpadmin.Verdict {
		return svc.AskAgain(ctx, tokens, r.site, "owner", r.id(admin), r.clientOf)
	}
	if v := ask(r.svc, r.tokens); v.Kind != erpadmin.VerdictAdmin || r.sim.RefreshCount() != 0 {
		t.Fatalf("within the token's life: verdict %d (%v), %d refreshes; want an administrator, none", v.Kind, v.Err, r.sim.RefreshCount())
	}

	clock.advance(11 * time.Minute) // the ERP's token expired; erpgate's clock does not know
	other, otherTokens := r.replica(), pagesession.NewTokens(r.pool, r.ring)
	var wg sync.WaitGroup
	verdicts := make([]erpadmin.Verdict, 2)
	for i, rep := range []struct {
		svc    *erpadmin.Service
		tokens *pagesession.Tokens
	}{{r.svc, r.tokens}, {other, otherTokens}} {
		wg.Go(func() { verdicts[i] = ask(rep.svc, rep.tokens) })
	}
	wg.Wait()
	for i, v := range verdicts {
		if v.Kind != erpadmin.VerdictAdmin {
			t.Errorf("replica %d after the token expired: verdict %d (%v), want an administrator", i+1, v.Kind, v.Err)
		}
	}
	if n := r.sim.RefreshCount(); n != 1 {
		t.Errorf("%d refreshes at the ERP, want 1", n)
	}
	if v := ask(other, otherTokens); v.Kind != erpadmin.VerdictAdmin || r.sim.RefreshCount() != 1 {
		t.Errorf("the next change: verdict %d (%v), %d refreshes; want an administrator with the renewed token", v.Kind, v.Err, r.sim.RefreshCount())
	}

	clock.advance(11 * time.Minute)
	r.sim.SetFault(acumaticatest.Fault{PathPrefix: "/identity/connect/token", Times: 1, Status: http.StatusServiceUnavailable, Body: `{}`})
	if v := ask(r.svc, r.tokens); v.Kind != erpadmin.VerdictUnreachable {
		t.Errorf("the token endpoint failing: verdict %d (%v), want the ERP unreachable", v.Kind, v.Err)
	}
	if _, _, err := r.tokens.Get(ctx, r.site.ID, "owner"); err != nil {
		t.Errorf("the kept token after a refresh that failed for now: %v", err)
	}

	r.sim.RevokeRefreshTokens(admin.Username)
	if v := ask(r.svc, r.tokens); v.Kind != erpadmin.VerdictTokenRefused {
		t.Errorf("the refresh token revoked: verdict %d (%v), want the token refused", v.Kind, v.Err)
	}
}

// A kept token whose stated life ends within the minute is renewed before
// the ERP is asked, as people's are, rather than sent to be refused.
func TestAskAgainRenewsATokenAboutToExpireFirst(t *testing.T) {
	r := newAcuRig(t, acumaticatest.Options{TokenLifetime: 30 * time.Second})
	admin := r.admin(t)
	r.keepSignIn(t, "owner", admin, r.signIn(t, admin))
	_, before, err := r.tokens.Get(t.Context(), r.site.ID, "owner")
	if err != nil {
		t.Fatal(err)
	}
	if v := r.svc.AskAgain(t.Context(), r.tokens, r.site, "owner", r.id(admin), r.clientOf); v.Kind != erpadmin.VerdictAdmin {
		t.Fatalf("verdict %d (%v), want an administrator", v.Kind, v.Err)
	}
	_, after, err := r.tokens.Get(t.Context(), r.site.ID, "owner")
	if n := r.sim.RefreshCount(); n != 1 || err != nil || after == before {
		t.Errorf("%d refreshes, the kept token renewed %v (%v); want 1 and the renewed one kept", n, after != before, err)
	}
}
