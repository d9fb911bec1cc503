package frappe

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

// echoingTokenEndpoint is a hostile or careless get_token that quotes
// every value it was sent (client secret, code, verifier, refresh token)
// in its answer: in the OAuth error fields, in Frappe's own exception
// fields and as plain text.
func echoingTokenEndpoint(t *testing.T, status int, contentType string) connector.Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		var all []string
		for k, v := range r.PostForm {
			all = append(all, k+"="+strings.Join(v, ","))
		}
		echo := strings.Join(all, " ")
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		if contentType == "text/html" {
			_, _ = w.Write([]byte("<html>" + echo + "</html>"))
			return
		}
		msgs, _ := json.Marshal([]string{`{"message": "` + echo + `"}`})
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": "invalid_request", "error_description": echo, "error_uri": "https://x/" + echo,
			"exception": "frappe.exceptions.ValidationError: " + echo, "exc_type": "ValidationError",
			"_server_messages": string(msgs), "message": echo,
		})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return connector.Site{Slug: "evil", Kind: Kind, BaseURL: u}
}

// TestTokenErrorsQuoteNoSecret: whatever get_token answers, the error
// erpgate returns (shown to MCP clients, written to logs) never contains
// a value erpgate sent it.
func TestTokenErrorsQuoteNoSecret(t *testing.T) {
	const clientSecret, code, verifier, refresh = "s3cret-client-XYZ", "code-ABC-123", "verifier-DEF-456", "refresh-GHI-789"
	client := connector.OAuthClient{ID: "cid", Secret: secrets.Secret(clientSecret)}
	for _, status := range []int{200, 400, 401, 403, 404, 417, 429, 500, 502} {
		for _, ct := range []string{"application/json", "text/html"} {
			site := echoingTokenEndpoint(t, status, ct)
			hc := &http.Client{}
			_, err := (&Connector{}).ExchangeCode(context.Background(), site, client, hc, code, "https://gw/cb", verifier)
			if err == nil {
				t.Fatalf("HTTP %d %s: exchange succeeded", status, ct)
			}
			for _, s := range []string{clientSecret, code, verifier} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d %s: exchange error quotes %q: %v", status, ct, s, err)
				}
			}
			_, err = (&Connector{}).RefreshToken(context.Background(), site, client, hc, secrets.Secret(refresh))
			if err == nil {
				t.Fatalf("HTTP %d %s: refresh succeeded", status, ct)
			}
			for _, s := range []string{clientSecret, refresh} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("HTTP %d %s: refresh error quotes %q: %v", status, ct, s, err)
				}
			}
		}
	}
}
