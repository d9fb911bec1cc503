package acumatica

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func TestAPICredentialFields(t *testing.T) {
	var names []string
	secret := map[string]bool{}
	for _, f := range New(Options{}).APICredentialFields() {
		names = append(names, f.Name)
		secret[f.Name] = f.Secret
	}
	if strings.Join(names, ",") != "client_id,client_secret,username,password" || !secret["client_secret"] || !secret["password"] || secret["username"] {
		t.Fatalf("fields = %v, secret %v", names, secret)
	}
	if _, err := New(Options{}).APIAuthorizer(connector.Site{}, map[string]secrets.Secret{"client_id": "x"}); err == nil {
		t.Fatal("an incomplete credential was accepted")
	}
}

// The service connection signs in with the password grant and scope
// "api offline_access" (never api:concurrent_access), once for any number
// of concurrent calls and authorizers.
func TestServiceConnectionSignsInOnceWithTheAPIScope(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.run(kindService, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	grants := h.grantsOf("password")
	if len(grants) != 1 {
		t.Fatalf("%d password grants, want 1", len(grants))
	}
	if got := grants[0].Get("scope"); got != "api offline_access" {
		t.Errorf("scope = %q", got)
	}
	if grants[0].Get("username") != h.sim.User(acumaticatest.RoleService).Username {
		t.Errorf("username = %q", grants[0].Get("username"))
	}
}

func TestVerifyAPICredential(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	verify := func(fields map[string]secrets.Secret) (string, error) {
		auth, err := h.conn.APIAuthorizer(h.site, fields)
		if err != nil {
			t.Fatal(err)
		}
		return h.conn.VerifyAPICredential(context.Background(), h.site, h.out.Client(h.site, auth))
	}
	who, err := verify(h.serviceFields())
	if err != nil || who != h.sim.User(acumaticatest.RoleService).Username {
		t.Fatalf("verify = %q, %v", who, err)
	}

	bad := h.serviceFields()
	bad["password"] = "wrong"
	_, err = verify(bad)
	te := wantCode(t, err, toolerr.AuthExpired, "wrong password")
	if !strings.Contains(te.Message, "invalid_grant") {
		t.Errorf("message = %s", te.Message)
	}

	noAPI := h.serviceFields()
	u := h.sim.User(acumaticatest.RoleNoAPI)
	noAPI["username"], noAPI["password"] = secrets.Secret(u.Username), secrets.Secret(u.Password)
	_, err = verify(noAPI)
	wantCode(t, err, toolerr.AuthExpired, "user without an API licence")

	codeFlow := h.serviceFields()
	codeFlow["client_id"] = secrets.Secret(acumaticatest.DefaultCodeClientGUID + "@Demo")
	codeFlow["client_secret"] = acumaticatest.DefaultCodeClientSecret
	_, err = verify(codeFlow)
	te = wantCode(t, err, toolerr.PermissionDenied, "client without the password flow")
	if !strings.Contains(te.Message, "Resource Owner Password") {
		t.Errorf("message = %s", te.Message)
	}

	h25 := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_name":"Custom","endpoint_version":"2.0"}`})
	auth, _ := h25.conn.APIAuthorizer(h25.site, h25.serviceFields())
	_, err = h25.conn.VerifyAPICredential(context.Background(), h25.site, h25.out.Client(h25.site, auth))
	te = wantCode(t, err, toolerr.InvalidArgument, "missing endpoint")
	if !strings.Contains(te.Message, "Custom/2.0") {
		t.Errorf("message = %s", te.Message)
	}
}

// Without an outbound transport (a catalogue-only build) a service call
// fails cleanly instead of panicking.
func TestServiceAuthorizerWithoutTransport(t *testing.T) {
	c := New(Options{})
	h := newHarness(t, harnessOptions{})
	auth, err := c.APIAuthorizer(h.site, h.serviceFields())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/entity", nil)
	wantCode(t, auth.Authorize(req), toolerr.Internal, "no transport")
}

// Every API-user seat of the licence taken (the simulator answers the
// sign-in 429 invalid_grant "API Login Limit"): the service connection's
// sign-in is RATE_LIMITED with a wait, not reported as a wrong password
// that sends the operator to fix a credential that is fine.
func TestServiceSignInAtTheLoginLimitIsRateLimited(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{SeatLimit: 1}})
	args := map[string]any{"CurrencyID": "USD"}
	h.mustRun(kindFull, "acumatica_get_currency", args) // takes the one seat
	_, err := h.run(kindService, "acumatica_get_currency", args)
	te := wantCode(t, err, toolerr.RateLimited, "a service sign-in beyond the licence's seats")
	if !strings.Contains(te.Message, "API Login Limit") || te.RetryAfter <= 0 || strings.Contains(te.Message, "password") {
		t.Errorf("message = %s (retry after %s)", te.Message, te.RetryAfter)
	}
}
