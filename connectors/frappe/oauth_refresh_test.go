package frappe

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// signedIn walks the sign-in for u with a fresh client on s and returns
// the site, the client as erpgate holds it and the tokens get_token gave.
func signedIn(t *testing.T, s *frappetest.Server, u frappetest.User) (connector.Site, connector.OAuthClient, connector.UpstreamToken) {
	t.Helper()
	st := siteOf(t, s, "")
	redirect := "https://gw.example/oauth/callback"
	client := s.AddClient(frappetest.OAuthClient{AppName: "erpgate", RedirectURIs: []string{redirect}, SkipAuthorization: true})
	held := connector.OAuthClient{ID: client.ID, Secret: secrets.Secret(client.Secret)}
	verifier := strings.Repeat("w", 50)
	sum := sha256.Sum256([]byte(verifier))
	c := New()
	authURL, err := c.AuthorizationURL(st, held, connector.AuthorizationRequest{RedirectURI: redirect, State: "st",
		CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	code := signInCode(t, s, client, u, authURL)
	tok, err := c.ExchangeCode(context.Background(), st, held, factory.Client(st, nil), code, redirect, verifier)
	if err != nil {
		t.Fatal(err)
	}
	return st, held, tok
}

// TestRefreshWithARevokedTokenIsDead: Frappe v15 answers a refresh grant
// whose refresh token is revoked or unknown not with invalid_grant but
// with a 404 DoesNotExistError (validate_refresh_token looks the token up
// with frappe.get_doc, which raises; authenticate_client does the same
// with the OAuth Client). The refresh token is dead for good and the user
// must sign in again, whichever way it was revoked; the error names
// neither token.
func TestRefreshWithARevokedTokenIsDead(t *testing.T) {
	s := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(s.Close)
	u := s.User("all-companies")
	c := New()
	revoke := func(st connector.Site, form url.Values) {
		t.Helper()
		res, err := factory.Client(st, nil).PostForm(st.URL("/api/method/frappe.integrations.oauth2.revoke_token", nil), form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	for _, tc := range []struct {
		name   string
		revoke func(connector.Site, connector.OAuthClient, connector.UpstreamToken)
	}{
		{"refresh token revoked", func(st connector.Site, held connector.OAuthClient, tok connector.UpstreamToken) {
			revoke(st, url.Values{"token": {tok.RefreshToken.Reveal()}, "token_type_hint": {"refresh_token"}, "client_id": {held.ID}})
		}},
		{"access token revoked", func(st connector.Site, held connector.OAuthClient, tok connector.UpstreamToken) {
			revoke(st, url.Values{"token": {tok.AccessToken.Reveal()}, "client_id": {held.ID}})
		}},
		{"revoked by an administrator", func(connector.Site, connector.OAuthClient, connector.UpstreamToken) { s.RevokeRefreshTokens(u.Email) }},
		{"unknown refresh token", nil},
		{"client removed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, held, tok := signedIn(t, s, u)
			refresh := tok.RefreshToken
			switch {
			case tc.revoke != nil:
				tc.revoke(st, held, tok)
			case tc.name == "client removed":
				held.ID = "c0ffee0001"
			default:
				refresh = secrets.Secret("unknownRefreshToken0123456789a")
			}
			_, err := c.RefreshToken(context.Background(), st, held, factory.Client(st, nil), refresh)
			if !errors.Is(err, connector.ErrRefreshTokenDead) {
				t.Fatalf("refresh = %v, want the refresh token dead", err)
			}
			for _, secret := range []string{refresh.Reveal(), tok.AccessToken.Reveal(), held.Secret.Reveal()} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error quotes a secret: %v", err)
				}
			}
		})
	}
	// A live refresh token still works, and its successor too.
	st, held, tok := signedIn(t, s, u)
	next, err := c.RefreshToken(context.Background(), st, held, factory.Client(st, nil), tok.RefreshToken)
	if err != nil || !next.AccessToken.IsSet() {
		t.Fatalf("refresh = %+v, %v", next, err)
	}
	if _, err := c.RefreshToken(context.Background(), st, held, factory.Client(st, nil), next.RefreshToken); err != nil {
		t.Fatalf("refresh with the new refresh token: %v", err)
	}
}

// TestRefreshForbiddenIsDead: Frappe 15.94.1 answers every refresh_token
// grant with 403 PermissionError "No permission for User" (frappe/frappe
// issue 36132): get_token runs as Guest and could not read the OAuth
// Bearer Token. No repeat of the refresh will ever work there, but a new
// sign-in does, so the refresh token is dead (the user is asked to sign
// in again) rather than a permission the user lacks.
func TestRefreshForbiddenIsDead(t *testing.T) {
	s := frappetest.NewServer(frappetest.Options{FrappeVersion: "15.94.1", RefreshGrantForbidden: true})
	t.Cleanup(s.Close)
	st, held, tok := signedIn(t, s, s.User("all-companies"))
	_, err := New().RefreshToken(context.Background(), st, held, factory.Client(st, nil), tok.RefreshToken)
	if !errors.Is(err, connector.ErrRefreshTokenDead) {
		t.Fatalf("refresh = %v, want the refresh token dead", err)
	}
	for _, secret := range []string{tok.RefreshToken.Reveal(), tok.AccessToken.Reveal(), held.Secret.Reveal()} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}
