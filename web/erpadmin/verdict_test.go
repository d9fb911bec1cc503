package erpadmin_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/connectors/frappe"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
)

// TestAskAgainSortsTheOutcomes: AskAgain, the one re-check of the owner's
// page and of the registration's last step, finds the token kept under a
// key on the site (only the expected person's, case aside), asks the
// Frappe simulator with it, and sorts what it finds: still an
// administrator, no token, a token the ERP refuses, an ERP that cannot be
// reached, not an administrator (with the ERP's evidence), and erpgate's
// own failures, each with its step. No verdict carries the token.
func TestAskAgainSortsTheOutcomes(t *testing.T) {
	ctx := t.Context()
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	pool := pgtest.NewPool(t)
	ring := newKeyring(t)
	reg := connector.NewRegistry()
	reg.MustRegister(frappe.New())
	svc := erpadmin.New(erpadmin.Deps{Pool: pool, Keyring: ring, Registry: reg,
		HTTPClient: outbound.NewFactory(outbound.Options{}).Client, PublicBaseURL: "http://127.0.0.1:1"})
	store := sites.NewStore(pool, ring)
	newSite := func(slug, baseURL string) sites.Site {
		t.Helper()
		site, err := store.CreateSite(ctx, sites.NewSite{Slug: slug, Kind: "frappe", DisplayName: "Site " + slug, BaseURL: baseURL, Settings: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return site
	}
	// gone is an address nothing answers at any more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	acme, beta, down := newSite("acme", sim.URL), newSite("beta", "http://127.0.0.1:8002"), newSite("down", gone)

	tokens := pagesession.NewTokens(pool, ring)
	var issued []string
	keep := func(site sites.Site, key, user, token string) {
		t.Helper()
		issued = append(issued, token)
		if err := tokens.Keep(ctx, site.ID, key, user, secrets.Secret(token), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	clerk := userWithRole(t, sim, frappetest.RoleNonAdministrator)
	adminToken := sim.IssueAccessToken(admin.Email, time.Hour)
	keep(acme, "admin", strings.ToUpper(admin.Email), adminToken)
	keep(acme, "clerk", clerk.Email, sim.IssueAccessToken(clerk.Email, time.Hour))
	keep(beta, "on beta", admin.Email, adminToken)
	keep(down, "down", admin.Email, adminToken)
	revoked := sim.IssueAccessToken(admin.Email, time.Hour)
	sim.RevokeAccessToken(revoked)
	keep(acme, "revoked", admin.Email, revoked)
	keep(acme, "expired", admin.Email, sim.IssueAccessToken(admin.Email, -time.Second))

	// erpgate's own failures: a database that cannot be read, a site
	// whose stored address is not one, a kind no connector serves.
	closed, err := pgxpool.NewWithConfig(ctx, pool.Config())
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	unread := pagesession.NewTokens(closed, ring)
	badAddress, noConnector := acme, acme
	badAddress.BaseURL = "ftp://" + strings.TrimPrefix(sim.URL, "http://")
	noConnector.Kind = "acumatica"

	for _, c := range []struct {
		name      string
		tokens    *pagesession.Tokens
		site      sites.Site
		key, user string
		want      erpadmin.VerdictKind
		noToken   bool // Err is pagesession.ErrNoToken
		step      erpadmin.Step
	}{
		{"an administrator, kept in other case", tokens, acme, "admin", admin.Email, erpadmin.VerdictAdmin, false, 0},
		{"nothing kept under the key", tokens, acme, "nobody", admin.Email, erpadmin.VerdictNoToken, true, 0},
		{"another person's token", tokens, acme, "clerk", admin.Email, erpadmin.VerdictNoToken, false, 0},
		{"a token kept on another site", tokens, acme, "on beta", admin.Email, erpadmin.VerdictNoToken, true, 0},
		{"a revoked token", tokens, acme, "revoked", admin.Email, erpadmin.VerdictTokenRefused, false, 0},
		{"an expired token", tokens, acme, "expired", admin.Email, erpadmin.VerdictTokenRefused, false, 0},
		{"an ERP not answering", tokens, down, "down", admin.Email, erpadmin.VerdictUnreachable, false, 0},
		{"not an administrator", tokens, acme, "clerk", clerk.Email, erpadmin.VerdictNotAdmin, false, 0},
		{"the database unread", unread, acme, "admin", admin.Email, erpadmin.VerdictInternal, false, erpadmin.StepToken},
		{"a site's address unusable", tokens, badAddress, "admin", admin.Email, erpadmin.VerdictInternal, false, erpadmin.StepSite},
		{"no connector of the kind", tokens, noConnector, "admin", admin.Email, erpadmin.VerdictInternal, false, erpadmin.StepAsk},
	} {
		v := svc.AskAgain(ctx, c.tokens, c.site, c.key, c.user, nil)
		if v.Kind != c.want || v.Step != c.step {
			t.Errorf("%s: verdict %d at step %d (%v), want %d at step %d", c.name, v.Kind, v.Step, v.Err, c.want, c.step)
		}
		if got := errors.Is(v.Err, pagesession.ErrNoToken); got != c.noToken {
			t.Errorf("%s: Err %v, want ErrNoToken %v", c.name, v.Err, c.noToken)
		}
		if (c.want == erpadmin.VerdictInternal) != (v.Err != nil && !c.noToken) {
			t.Errorf("%s: Err %v on a verdict %d", c.name, v.Err, v.Kind)
		}
		if c.want == erpadmin.VerdictNotAdmin && !strings.Contains(v.Evidence, frappetest.SystemManager) {
			t.Errorf("%s: evidence %q does not name the %s role", c.name, v.Evidence, frappetest.SystemManager)
		}
		if c.want != erpadmin.VerdictNotAdmin && c.want != erpadmin.VerdictAdmin && v.Evidence != "" {
			t.Errorf("%s: evidence %q on a verdict %d", c.name, v.Evidence, v.Kind)
		}
		for _, tok := range issued {
			if strings.Contains(fmt.Sprintf("%+v", v), tok) {
				t.Errorf("%s: the verdict carries an ERP token", c.name)
			}
		}
	}
}
