package acumatica

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/secrets"
)

// echoingTokenEndpoint is a hostile or careless /identity/connect/token
// that quotes every value it was sent (client secret, code, verifier,
// refresh token, password) in its answer: in the OAuth error fields, in
// Acumatica's exception fields (after the words that make it a refused
// sign-in or a seat limit) and as plain text.
func echoingTokenEndpoint(t *testing.T, status int, contentType, errorCode, prefix string) connector.Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var all []string
		for k, v := range r.PostForm {
			all = append(all, k+"="+strings.Join(v, ","))
		}
		echo := prefix + " " + strings.Join(all, " ")
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if contentType == "text/html" {
			_, _ = w.Write([]byte(echo))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": errorCode, "error_description": echo, "error_uri": "https://x/" + echo,
			"message": echo, "exceptionMessage": echo, "exceptionType": "PX.Data.PXException",
		})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
}

// TestTokenErrorsQuoteNoSecret: whatever the token endpoint answers, the
// error erpgate returns (shown to MCP clients and operators, written to
// logs) never contains a value erpgate sent it.
func TestTokenErrorsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh, password = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789", "passw0rd-JKL-012"
	client := connector.OAuthClient{ID: "cid@Tenant", Secret: secrets.Secret(clientSecret)}
	cred := serviceCredential{client: client, username: "api-user", password: secrets.Secret(password)}
	hc := &http.Client{}
	check := func(what string, err error, sent ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: succeeded", what)
			return
		}
		for _, s := range sent {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: error quotes %q: %v", what, s, err)
			}
		}
	}
	for _, status := range []int{200, 400, 401, 403, 429, 500, 502} {
		for _, ct := range []string{"application/json", "text/html"} {
			for _, ec := range []string{"", "invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope", "invalid_request"} {
				for _, prefix := range []string{"", "Error: Invalid credentials.", "API Login Limit"} {
					site := echoingTokenEndpoint(t, status, ct, ec, prefix)
					what := strings.Join([]string{http.StatusText(status), ct, ec, prefix}, "/")
					_, err := OAuth{}.ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
					check("exchange "+what, err, clientSecret, code, verifier)
					_, err = OAuth{}.RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
					check("refresh "+what, err, clientSecret, refresh)
					_, err = passwordGrant(context.Background(), site, cred, hc)
					check("password grant "+what, err, clientSecret, password)
				}
			}
		}
	}
}
