package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCredentialCheckInPlainWords: when the ERP cannot be asked about an
// API credential, the admin API's message (which the owner's page and the
// console show as it is) says why in a sentence: without the tool error
// code the model gets ("(UPSTREAM_UNAVAILABLE)") and, for a certificate
// erpgate does not trust, saying so rather than "could not be reached".
func TestCredentialCheckInPlainWords(t *testing.T) {
	gw := startGateway(t, "", nil)
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	for _, c := range []struct {
		name, baseURL, want string
	}{
		{"nothing listens", closedAddress(t), "could not be reached"},
		{"an untrusted certificate", untrusted.URL, "TLS certificate that erpgate does not trust"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var site siteResponse
			slug := strings.ReplaceAll(c.name, " ", "-")
			if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
				map[string]any{"slug": slug, "kind": "frappe", "display_name": c.name, "base_url": c.baseURL}, &site); err != nil {
				t.Fatal(err)
			}
			err := gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
				map[string]any{"credentials": map[string]string{"api_key": "k", "api_secret": "s"}}, nil)
			var ae *apiError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway {
				t.Fatalf("put credential: %v", err)
			}
			if !strings.Contains(ae.Message, c.want) || strings.Contains(ae.Message, "UPSTREAM") || strings.Contains(ae.Message, "x509") {
				t.Errorf("message %q, want %q and no error code or library text", ae.Message, c.want)
			}
		})
	}
}
