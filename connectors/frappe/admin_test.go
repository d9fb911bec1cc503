package frappe

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/secrets"
)

// adminCheck runs CheckAdmin on s as user u (their OAuth access token, as
// after sign-in), claiming the identity claimed.
func adminCheck(t *testing.T, s *frappetest.Server, u frappetest.User, claimed string) (connector.AdminCheck, error) {
	t.Helper()
	st := siteOf(t, s, "")
	tok := s.IssueAccessToken(u.Email, time.Hour)
	c := New()
	hc := factory.Client(st, c.TokenAuthorizer(secrets.Secret(tok)))
	return c.CheckAdmin(context.Background(), st, hc, connector.UpstreamUser{ID: claimed, DisplayName: u.FullName})
}

func TestCheckAdminFollowsSystemManagerRole(t *testing.T) {
	s := testSim(t)
	admins := 0
	for _, u := range s.Users() {
		got, err := adminCheck(t, s, u, u.Email)
		if err != nil {
			t.Fatalf("%s: %v", u.Email, err)
		}
		if got.Admin != u.IsSystemManager() {
			t.Errorf("%s (roles %v): Admin = %v, want %v", u.Email, u.Roles, got.Admin, u.IsSystemManager())
		}
		want := "lacks the System Manager role"
		if u.IsSystemManager() {
			want = "has the System Manager role"
			admins++
		}
		if got.Evidence != want {
			t.Errorf("%s: evidence %q, want %q", u.Email, got.Evidence, want)
		}
	}
	if admins != 1 {
		t.Fatalf("the simulator has %d administrators, want exactly 1", admins)
	}
	// The registration personas.
	if got, _ := adminCheck(t, s, s.User(frappetest.RoleAdministrator), s.User(frappetest.RoleAdministrator).Email); !got.Admin {
		t.Error("the administrator persona is not an administrator")
	}
	non := s.User(frappetest.RoleNonAdministrator)
	if got, _ := adminCheck(t, s, non, non.Email); got.Admin || len(non.Roles) != 1 || non.Roles[0] != "Sales User" {
		t.Errorf("the non-administrator persona (roles %v) checked as %+v", non.Roles, got)
	}
}

// A token of one user presented as another's sign-in proves nothing about
// the other: the check compares the profile with the identity it was given.
func TestCheckAdminRefusesAnotherUsersToken(t *testing.T) {
	s := testSim(t)
	admin := s.User(frappetest.RoleAdministrator)
	got, err := adminCheck(t, s, admin, s.User(frappetest.RoleNonAdministrator).Email)
	if err != nil {
		t.Fatal(err)
	}
	if got.Admin {
		t.Fatalf("an administrator's token passed as another user's proof: %+v", got)
	}
	// Frappe user names are e-mail addresses, compared without case.
	if got, err := adminCheck(t, s, admin, "IT.Admin@Demo.Example"); err != nil || !got.Admin {
		t.Fatalf("same user in other case: %+v, %v", got, err)
	}
}

// An ERP whose answer cannot be read never yields Admin true: failures are
// errors, never a default.
func TestCheckAdminUnreadableAnswersAreErrors(t *testing.T) {
	profile := "/api/method/frappe.integrations.oauth2.openid_profile"
	cases := []struct {
		name  string
		fault frappetest.Fault
	}{
		{"5xx", frappetest.Fault{PathPrefix: profile, Status: http.StatusInternalServerError}},
		{"502 from a proxy", frappetest.Fault{PathPrefix: profile, Status: http.StatusBadGateway, Body: []byte("<html>Bad Gateway</html>")}},
		{"garbage", frappetest.Fault{PathPrefix: profile, Body: []byte("<html><body>System Manager</body></html>")}},
		{"truncated JSON", frappetest.Fault{PathPrefix: profile, Body: []byte(`{"email":"it.admin@demo.example","roles":["System Manager"`)}},
		{"no roles member", frappetest.Fault{PathPrefix: profile, Body: []byte(`{"email":"it.admin@demo.example"}`)}},
		{"roles not a list", frappetest.Fault{PathPrefix: profile, Body: []byte(`{"email":"it.admin@demo.example","roles":"System Manager"}`)}},
		{"403", frappetest.Fault{PathPrefix: profile, Status: http.StatusForbidden}},
		{"connection reset", frappetest.Fault{PathPrefix: profile, ResetConnection: true}},
	}
	s := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(s.Close)
	admin := s.User(frappetest.RoleAdministrator)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.ClearFaults()
			s.SetFault(tc.fault)
			got, err := adminCheck(t, s, admin, admin.Email)
			if err == nil || got.Admin {
				t.Fatalf("got %+v, %v; want an error and Admin false", got, err)
			}
		})
	}
	s.ClearFaults()
	// A revoked token: the ERP answers 401, an error, not a verdict.
	st := siteOf(t, s, "")
	tok := s.IssueAccessToken(admin.Email, time.Hour)
	s.RevokeAccessToken(tok)
	c := New()
	got, err := c.CheckAdmin(context.Background(), st, factory.Client(st, c.TokenAuthorizer(secrets.Secret(tok))), connector.UpstreamUser{ID: admin.Email})
	if err == nil || got.Admin {
		t.Fatalf("revoked token: %+v, %v", got, err)
	}
}
