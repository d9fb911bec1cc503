package acumatica

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// signIn walks the authorization-code sign-in of u on h's simulator, as
// erpgate does, and returns a client carrying their token and who the ERP
// says they are.
func signIn(t *testing.T, h *harness, u acumaticatest.User) (*http.Client, connector.UpstreamUser) {
	t.Helper()
	ctx := context.Background()
	redirect := "https://gateway.example/oauth/callback"
	c := h.sim.RegisterClient(redirect)
	client := connector.OAuthClient{ID: c.ID, Secret: secrets.Secret(c.Secret)}
	verifier := strings.Repeat("verifier-", 6)
	sum := sha256.Sum256([]byte(verifier))
	authURL, err := h.conn.AuthorizationURL(h.site, client, connector.AuthorizationRequest{
		RedirectURI: redirect, State: "st", CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := acumaticatest.CompleteAuthorization(nil, authURL, u.Username, u.Password)
	if err != nil {
		t.Fatalf("sign in %s: %v", u.Username, err)
	}
	tok, err := h.conn.ExchangeCode(ctx, h.site, client, h.out.Client(h.site, nil), loc.Query().Get("code"), redirect, verifier)
	if err != nil {
		t.Fatalf("ExchangeCode: %v", err)
	}
	hc := h.out.Client(h.site, h.conn.TokenAuthorizer(tok.AccessToken))
	who, err := h.conn.Identify(ctx, h.site, hc)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	return hc, who
}

func TestCheckAdminFollowsAdministratorRole(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	ctx := context.Background()
	admins := 0
	for _, u := range h.sim.Users() {
		if u.Role == acumaticatest.RoleNoAPI {
			continue // cannot sign in at all
		}
		hc, who := signIn(t, h, u)
		got, err := h.conn.CheckAdmin(ctx, h.site, hc, who)
		if err != nil {
			t.Fatalf("%s: %v", u.Username, err)
		}
		if got.Admin != u.IsAdministrator() {
			t.Errorf("%s (roles %v): Admin = %v (%s)", u.Username, u.Roles, got.Admin, got.Evidence)
		}
		if u.IsAdministrator() {
			admins++
		}
	}
	if admins != 1 {
		t.Fatalf("%d administrators signed in, want 1", admins)
	}
	non := h.sim.User(acumaticatest.RoleNonAdmin)
	hc, who := signIn(t, h, non)
	got, err := h.conn.CheckAdmin(ctx, h.site, hc, who)
	if err != nil || got.Admin || !strings.Contains(got.Evidence, "may not read the administrators' inquiry MCPAdmin") {
		t.Fatalf("non-administrator: %+v, %v", got, err)
	}
}

// An administrators' inquiry published to every role by mistake lets a
// non-administrator read it, but it lists only the roles they have: they
// are still refused.
func TestCheckAdminWidenedInquiryStillRefusesNonAdministrators(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	non := h.sim.User(acumaticatest.RoleNonAdmin)
	h.sim.SetInquiryAccess(non.Username, acumaticatest.AdminInquiry, true)
	hc, who := signIn(t, h, non)
	got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who)
	if err != nil || got.Admin || got.Evidence != "lacks the Administrator role" {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A token presented as someone else's sign-in proves nothing.
	admin := h.sim.User(acumaticatest.RoleFull)
	ahc, _ := signIn(t, h, admin)
	if got, err := h.conn.CheckAdmin(context.Background(), h.site, ahc, who); err != nil || got.Admin {
		t.Fatalf("administrator's token as %s: %+v, %v", who.ID, got, err)
	}
}

func TestCheckAdminMissingInquiryIsNotAdmin(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","admin_gi":"NoSuchInquiry"}`})
	hc, who := signIn(t, h, h.sim.User(acumaticatest.RoleFull))
	got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who)
	if err != nil || got.Admin || !strings.Contains(got.Evidence, "NoSuchInquiry does not exist") {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// An ERP whose answer cannot be read never yields Admin true.
func TestCheckAdminUnreadableAnswersAreErrors(t *testing.T) {
	h := newHarness(t, harnessOptions{noRetry: true})
	admin := h.sim.User(acumaticatest.RoleFull)
	hc, who := signIn(t, h, admin)
	gi := "/t/Demo/api/odata/gi/MCPAdmin"
	cases := []struct {
		name  string
		fault acumaticatest.Fault
	}{
		{"inquiry 500", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusInternalServerError, Body: `{"message":"An error has occurred."}`}},
		{"inquiry 503 HTML", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusServiceUnavailable, Body: "<html>down</html>"}},
		{"inquiry garbage", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusOK, Body: `<html>Administrator</html>`}},
		{"inquiry without value", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusOK, Body: `{"Username":"admin","Rolename":"Administrator"}`}},
		{"inquiry value not a list", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusOK, Body: `{"value":"Administrator"}`}},
		{"inquiry 401", acumaticatest.Fault{PathPrefix: gi, Status: http.StatusUnauthorized, Body: `{"message":"Authorization has been denied for this request."}`}},
		{"userinfo 500", acumaticatest.Fault{PathPrefix: "/identity/connect/userinfo", Status: http.StatusInternalServerError, Body: `{}`}},
		{"userinfo garbage", acumaticatest.Fault{PathPrefix: "/identity/connect/userinfo", Status: http.StatusOK, Body: `not json`}},
		{"connection reset", acumaticatest.Fault{PathPrefix: gi, ResetConnection: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.sim.ClearFaults()
			h.sim.SetFault(tc.fault)
			got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who)
			if err == nil || got.Admin {
				t.Fatalf("got %+v, %v; want an error and Admin false", got, err)
			}
		})
	}
	h.sim.ClearFaults()
	if got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who); err != nil || !got.Admin {
		t.Fatalf("after the faults: %+v, %v", got, err)
	}
}

// FuzzListsAdministrator: whatever the inquiry answers, Administrator is
// granted only by a row naming the user and the Administrator role.
func FuzzListsAdministrator(f *testing.F) {
	f.Add([]byte(`{"@odata.context":"x","value":[{"Username":"admin","Rolename":"Administrator"}]}`), "admin")
	f.Add([]byte(`{"value":[{"Username":"admin","Rolename":"Accountant"}]}`), "admin")
	f.Add([]byte(`{"value":[{"Username":"ADMIN","Rolename":"administrator"}]}`), "admin")
	f.Add([]byte(`{"value":null}`), "admin")
	f.Add([]byte(`{"value":"Administrator"}`), "admin")
	f.Add([]byte(`<html>Administrator</html>`), "")
	f.Fuzz(func(t *testing.T, body []byte, user string) {
		admin, err := listsAdministrator(body, user)
		if err != nil && admin {
			t.Fatal("an error with Admin true")
		}
		if !admin {
			return
		}
		var page struct {
			Value []map[string]any `json:"value"`
		}
		if json.Unmarshal(body, &page) != nil {
			t.Fatalf("Admin true from a body that is not JSON: %q", body)
		}
		for _, row := range page.Value {
			n, _ := row["Username"].(string)
			r, _ := row["Rolename"].(string)
			if user != "" && strings.EqualFold(n, user) && strings.EqualFold(r, "Administrator") {
				return
			}
		}
		t.Fatalf("Admin true for %q without their Administrator row: %q", user, body)
	})
}

// Under a virtual directory every request of the check stays in it.
func TestCheckAdminUnderVirtualDirectory(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{PathPrefix: "/AcumaticaERP"}})
	hc, who := signIn(t, h, h.sim.User(acumaticatest.RoleFull))
	got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who)
	if err != nil || !got.Admin {
		t.Fatalf("got %+v, %v", got, err)
	}
	if n := h.sim.OutsideRequests(); n != 0 {
		t.Fatalf("%d requests went outside the virtual directory", n)
	}
}

// One Acumatica instance serves several tenants, each with its own users
// and Connected Applications (a client id "GUID@Tenant" signs people in
// to that tenant, and userinfo's sub is "user@Tenant"). An administrator
// of one tenant signing in with their own tenant's client must not prove
// themselves an administrator of another tenant of the instance: here
// the instance answers the other tenant's inquiry (where a user of the
// same name is an Administrator, as the built-in admin is in every
// tenant), and the check still refuses, naming the tenant they signed in
// to.
func TestCheckAdminRefusesAnotherTenantsSignIn(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Victim"}`})
	admin := h.sim.User(acumaticatest.RoleFull)
	hc, who := signIn(t, h, admin)
	h.sim.SetFault(acumaticatest.Fault{PathPrefix: "/t/Victim/api/odata/gi/MCPAdmin", Status: http.StatusOK,
		Body: `{"value":[{"Username":"` + admin.Username + `","Rolename":"Administrator"}]}`})
	got, err := h.conn.CheckAdmin(context.Background(), h.site, hc, who)
	if err != nil {
		t.Fatal(err)
	}
	if got.Admin {
		t.Fatalf("%s, signed in to tenant %s, proved an administrator of tenant Victim: %+v", who.ID, h.sim.Tenant(), got)
	}
	if !strings.Contains(got.Evidence, "tenant "+h.sim.Tenant()) || !strings.Contains(got.Evidence, "Victim") {
		t.Fatalf("evidence %q does not name the tenant signed in to (%s) and the site's (Victim)", got.Evidence, h.sim.Tenant())
	}
	// The site's own tenant, spelt in another case, is the same tenant.
	h2 := newHarness(t, harnessOptions{settings: `{"tenant":"` + strings.ToUpper(h.sim.Tenant()) + `"}`})
	hc2, who2 := signIn(t, h2, h2.sim.User(acumaticatest.RoleFull))
	if got, err := h2.conn.CheckAdmin(context.Background(), h2.site, hc2, who2); err != nil || !got.Admin {
		t.Fatalf("administrator of the site's tenant: %+v, %v", got, err)
	}
}
