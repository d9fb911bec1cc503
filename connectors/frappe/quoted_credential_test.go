package frappe

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
)

// TestToolErrorQuotesNoCredential: a Frappe (or a proxy in front of it)
// that refuses a tool call's request and quotes the credential the request
// carried, without the "token" or "Bearer" before it that the later
// redaction of error text looks for, in its exception or its
// _server_messages. The message goes to the model and the operator; the
// credential must be in neither: a person's access token, or a service
// connection's API key and secret.
func TestToolErrorQuotesNoCredential(t *testing.T) {
	const accessToken = "Zq81kTw0VbLmR4sYcE7uNdHx2a"
	const apiKey, apiSecret = "3f9c1e7b2a5d8c4", "9e8d7c6b5a4f3e2"
	for _, tc := range []struct {
		name, header, quoted string
		secrets              []string
	}{
		{"oauth", "Bearer " + accessToken, accessToken, []string{accessToken}},
		{"api key", "token " + apiKey + ":" + apiSecret, apiKey + ":" + apiSecret, []string{apiKey, apiSecret}},
	} {
		for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusExpectationFailed, http.StatusInternalServerError} {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				msg, _ := json.Marshal([]string{`{"message": "Not permitted for session ` + tc.quoted + `"}`})
				_ = json.NewEncoder(w).Encode(map[string]any{"exc_type": "PermissionError",
					"exception": "frappe.exceptions.PermissionError: session " + tc.quoted + " is not permitted", "_server_messages": string(msg)})
			}))
			base, _ := url.Parse(srv.URL)
			st := connector.Site{Slug: "echo", Kind: Kind, DisplayName: "Echo", BaseURL: base, Settings: []byte("{}")}
			auth := connector.AuthorizerFunc(func(r *http.Request) error {
				r.Header.Set("Authorization", tc.header)
				return nil
			})
			tl := toolByName(t, "list_customers")
			raw, err := validArgs(t, tl, map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err = tl.Handler(ctx, &connector.Call{Site: st, HTTP: factory.ToolClient(st, auth, tl.Effect, New()), Args: raw,
				Principal: connector.Principal{AuthType: "oauth", Subject: "someone@example.com"}, MaxRecords: 1000})
			cancel()
			srv.Close()
			if err == nil {
				t.Fatalf("%s, HTTP %d: the call succeeded", tc.name, status)
			}
			for _, s := range tc.secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("%s, HTTP %d: the error quotes the credential: %v", tc.name, status, err)
				}
			}
		}
	}
}
