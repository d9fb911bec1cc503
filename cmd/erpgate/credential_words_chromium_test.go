package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	// An address that answers everything with broken JSON: not an ERP.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"message": [1, 2,`))
	}))
	defer garbage.Close()
	frappeCredential := map[string]string{"api_key": "k", "api_secret": "s"}
	for _, c := range []struct {
		name, kind, baseURL, want string
		credential                map[string]string
	}{
		{"nothing listens", "frappe", closedAddress(t), "could not be reached", frappeCredential},
		{"an untrusted certificate", "frappe", untrusted.URL, "TLS certificate that erpgate does not trust", frappeCredential},
		{"broken json", "acumatica", garbage.URL, "gave an answer an Acumatica site does not give",
			map[string]string{"client_id": "c@Demo", "client_secret": "s", "username": "u", "password": "p"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var site siteResponse
			slug := strings.ReplaceAll(c.name, " ", "-")
			if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
				map[string]any{"slug": slug, "kind": c.kind, "display_name": c.name, "base_url": c.baseURL}, &site); err != nil {
				t.Fatal(err)
			}
			err := gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
				map[string]any{"credentials": c.credential}, nil)
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

// TestChromiumConsoleNewSiteUnreachableInPlainWords adds a site in the
// console whose address has a certificate erpgate does not trust, then one
// where nothing listens. The console shows the refusal as the admin API
// words it: before, "could not be reached (UPSTREAM_UNAVAILABLE)" for both.
func TestChromiumConsoleNewSiteUnreachableInPlainWords(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	for _, c := range []struct{ name, baseURL, want string }{
		{"untrusted", untrusted.URL, "TLS certificate that erpgate does not trust"},
		{"closed", closedAddress(t), "could not be reached"},
	} {
		browserDo(t, ctx, "open the new-site form", chromedp.Navigate(gw.URL+"/console/sites/new?kind=frappe"))
		waitForTitle(t, ctx, "Add a site")
		for id, v := range map[string]string{"#display_name": "Acme Ltd", "#base_url": c.baseURL, "#slug": "acme-" + c.name,
			"#api_api_key": "k", "#api_api_secret": "s"} {
			browserDo(t, ctx, "fill "+id, chromedp.SetValue(chromedp.CSS(id), v))
		}
		submitAndWait(t, ctx, "add "+c.name, "Add a site", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
		saveScreenshot(t, ctx, "TestChromiumConsoleNewSiteUnreachableInPlainWords-"+c.name+".png")
		problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS("#problem")))
		if !strings.Contains(problem, c.want) || strings.Contains(problem, "UPSTREAM") {
			t.Errorf("%s: refusal %q, want %q without an error code", c.name, problem, c.want)
		}
		if got := browserResult(t, ctx, "read the kept address", chromedp.Evaluate[string](`document.querySelector("#base_url").value`)); got != c.baseURL {
			t.Errorf("%s: the address came back as %q", c.name, got)
		}
	}
}
