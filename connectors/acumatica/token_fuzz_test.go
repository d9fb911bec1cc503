package acumatica

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// FuzzTokenRefusalQuotesNoSecret: whatever /identity/connect/token
// answers (any status, any body), the error of a code exchange, a refresh
// or a service sign-in holds no eight consecutive characters of a value
// erpgate sent (client secret, code, verifier, refresh token, password),
// however the answer spells or cuts it. Those errors reach logs, sign-in
// pages, the site owner's page and the model.
func FuzzTokenRefusalQuotesNoSecret(f *testing.F) {
	const (
		clientSecret = `Cs"7k&Qz/9Lm<Wx2`
		code         = "cd-Hq4Rt8Vy2"
		verifier     = "vf-Np3Ks6Gj1"
		refresh      = "rt-Bw5Xe9Fu7"
		password     = `Pw"4Zr&9Td\Yh2`
	)
	// cleanDetail keeps 300 characters: after "Error: Invalid credentials "
	// and this padding, ten characters of what follows.
	pad := strings.Repeat("x", 262)
	for _, c := range []struct {
		status int
		body   string
	}{
		{500, `{"message":"An error has occurred.","exceptionMessage":"Error: Invalid credentials. Please try again.","exceptionType":"PX.Data.PXException","stackTrace":"   at PX.Data.PXLogin.LoginUser(String& userName, String password)"}`},
		{400, `{"error":"invalid_grant","error_description":"invalid_username_or_password"}`},
		{400, `{"error":"invalid_client"}`},
		{429, `{"error":"API Login Limit"}`},
		{502, `<html>Bad gateway</html>`},
		// An answer that quotes what it was sent, as a .NET serializer
		// writes it: the password's quote and backslash escaped.
		{500, `{"exceptionMessage":"Error: Invalid credentials for Pw\"4Zr&9Td\\Yh2"}`},
		{500, `{"exceptionMessage":"Error: Invalid credentials ` + pad + ` Pw\"4Zr&9Td\\Yh2"}`},
		{500, `{"exceptionMessage":"Error: Invalid credentials ` + pad + ` Cs\"7k&Qz\/9Lm\u003cWx2"}`},
	} {
		f.Add(c.status, []byte(c.body))
	}
	var mu sync.Mutex
	var status int
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		st, b := status, body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(st)
		_, _ = w.Write(b)
	}))
	f.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	site := connector.Site{Slug: "erp", Kind: Kind, BaseURL: u}
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	hc := &http.Client{}
	f.Fuzz(func(t *testing.T, st int, b []byte) {
		if st < 200 || st > 599 {
			st = 200 + (st%400+400)%400
		}
		mu.Lock()
		status, body = st, b
		mu.Unlock()
		ctx := context.Background()
		_, errExchange := OAuth{}.ExchangeCode(ctx, site, client, hc, code, "https://gw/cb", verifier)
		_, errRefresh := OAuth{}.RefreshToken(ctx, site, client, hc, secrets.Secret(refresh))
		_, errPassword := passwordGrant(ctx, site, cred, hc)
		for _, c := range []struct {
			what string
			err  error
			sent []string
		}{
			{"exchange", errExchange, []string{clientSecret, code, verifier}},
			{"refresh", errRefresh, []string{clientSecret, refresh}},
			{"password grant", errPassword, []string{clientSecret, password}},
		} {
			if c.err == nil {
				continue
			}
			what, msg := c.what, c.err.Error()
			for _, s := range c.sent {
				for i := 0; i+8 <= len(s); i++ {
					if strings.Contains(msg, s[i:i+8]) {
						t.Fatalf("%s, HTTP %d %q: the error quotes %q of a secret: %s", what, st, b, s[i:i+8], msg)
					}
				}
			}
		}
	})
}
