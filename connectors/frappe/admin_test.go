package frappe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
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
	// The administrator's API key is no sign-in: openid_profile answers
	// only OAuth tokens (401 invalid_token), an error.
	st0 := siteOf(t, s, "")
	keyAuth := connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "token "+admin.APIKey+":"+admin.APISecret)
		return nil
	})
	if got, err := New().CheckAdmin(context.Background(), st0, factory.Client(st0, keyAuth), connector.UpstreamUser{ID: admin.Email}); err == nil || got.Admin {
		t.Fatalf("API key: %+v, %v", got, err)
	}
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

// signInCode walks Frappe's sign-in for u with client (skip authorization
// on) and returns the authorization code erpgate's callback would get.
func signInCode(t *testing.T, s *frappetest.Server, client frappetest.OAuthClient, u frappetest.User, authURL string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if !strings.HasPrefix(req.URL.String(), s.URL) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := hc.PostForm(s.URL+"/login", url.Values{"usr": {u.Email}, "pwd": {u.Password}, "redirect-to": {"/app"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize for %s answered %d, Location %q", client.ID, res.StatusCode, res.Header.Get("Location"))
	}
	return loc.Query().Get("code")
}

// Frappe's get_token never compares the client secret; the id_token it
// signs with the secret is what tells a wrong one (a registration with a
// mistyped secret) from the right one.
func TestExchangeCodeRefusesWrongClientSecret(t *testing.T) {
	s := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(s.Close)
	st := siteOf(t, s, "")
	redirect := "https://gw.example/oauth/callback"
	c := New()
	admin := s.User(frappetest.RoleAdministrator)
	for _, tc := range []struct {
		name, secret string
		wantRefused  bool
	}{
		{"right secret", "", false},
		{"wrong secret", "0123456789", true},
		{"no secret held", "-", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := s.AddClient(frappetest.OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}, SkipAuthorization: true})
			held := connector.OAuthClient{ID: client.ID, Secret: secrets.Secret(client.Secret)}
			switch tc.secret {
			case "-":
				held.Secret = ""
			case "":
			default:
				held.Secret = secrets.Secret(tc.secret)
			}
			verifier := strings.Repeat("v", 50)
			sum := sha256.Sum256([]byte(verifier))
			authURL, err := c.AuthorizationURL(st, held, connector.AuthorizationRequest{RedirectURI: redirect, State: "st",
				CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
			if err != nil {
				t.Fatal(err)
			}
			code := signInCode(t, s, client, admin, authURL)
			tok, err := c.ExchangeCode(context.Background(), st, held, factory.Client(st, nil), code, redirect, verifier)
			if tc.wantRefused {
				if !errors.Is(err, connector.ErrRefreshTokenDead) || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), tc.secret) {
					t.Fatalf("got %v, want invalid_client without the secret", err)
				}
				return
			}
			if err != nil || !tok.AccessToken.IsSet() {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// FuzzCheckIDTokenSignature: whatever the ERP sends as id_token, the check
// never panics, and accepts an HS256 token only when its signature is the
// held secret's.
func FuzzCheckIDTokenSignature(f *testing.F) {
	sign := func(header, payload, secret string) string {
		h := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(h))
		return h + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	f.Add(sign(`{"typ":"jwt","alg":"HS256"}`, `{"aud":"c"}`, "s3cret"), "s3cret")
	f.Add(sign(`{"typ":"jwt","alg":"HS256"}`, `{"aud":"c"}`, "other"), "s3cret")
	f.Add(sign(`{"alg":"RS256"}`, `{}`, "x"), "s3cret")
	f.Add("a.b", "s3cret")
	f.Add("..", "s3cret")
	f.Fuzz(func(t *testing.T, idToken, secret string) {
		err := checkIDTokenSignature(idToken, connector.OAuthClient{ID: "c", Secret: secrets.Secret(secret)})
		parts := strings.Split(idToken, ".")
		if err != nil || secret == "" || idToken == "" || len(parts) != 3 {
			return
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
		var header struct {
			Alg string `json:"alg"`
		}
		if json.Unmarshal(raw, &header) != nil || header.Alg != "HS256" {
			return
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(parts[0] + "." + parts[1]))
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		if !hmac.Equal(sig, mac.Sum(nil)) {
			t.Fatalf("accepted an HS256 id_token not signed with the secret: %q", idToken)
		}
	})
}
