package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumConsoleCredentialRefusalsInPlainWords: the operator adds a
// site whose API credential the ERP rejects, then one with a control
// character pasted into the secret. The console tells both as a page
// does: what to check at the ERP, and which box of the form to paste
// again by its label; never the tool error's words for a model ("ask the
// operator to renew the API credential", to the operator), an HTTP status
// or the credential's field names (api_secret).
func TestChromiumConsoleCredentialRefusalsInPlainWords(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	user := userWithRole(t, sim, "service")
	ctx := newChromium(t)

	signInToConsole(t, ctx, gw, "/console")
	submitAndWait(t, ctx, "add a site", "Add a site", chromedp.Click(chromedp.CSS(`#add-site`)))
	submitAndWait(t, ctx, "choose Frappe", "Add a site", chromedp.Click(chromedp.CSS(`a[href$="kind=frappe"]`)))
	add := func(what, secret, screenshot string) string {
		t.Helper()
		for id, v := range map[string]string{"#display_name": "Acme Ltd", "#base_url": sim.URL, "#slug": "acme",
			"#api_api_key": user.APIKey, "#api_api_secret": secret} {
			browserDo(t, ctx, "fill "+id, chromedp.SetValue(chromedp.CSS(id), v))
		}
		submitAndWait(t, ctx, what, "Add a site", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
		saveScreenshot(t, ctx, screenshot)
		return browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS("#problem")))
	}
	for _, c := range []struct {
		what, secret, screenshot, want string
	}{
		{"add with a secret the ERP rejects", "not-the-secret", "console-new-site-credential-rejected.png",
			"The site was not added: The ERP did not accept this credential: check that each field is copied exactly as the ERP shows it; nothing was saved."},
		{"add with a control character pasted in the secret", user.APISecret[:4] + "\x07" + user.APISecret[4:], "console-new-site-credential-garbled.png",
			"The site was not added: The field “API secret of that user” has a line break or another control character in it, or bytes that are not text: paste it again; nothing was saved."},
	} {
		problem := add(c.what, c.secret, c.screenshot)
		if problem != c.want {
			t.Errorf("%s: the console says %q, want %q", c.what, problem, c.want)
		}
		for _, apiWords := range []string{"operator", "HTTP", "api_secret", "api_key", "sign in again"} {
			if strings.Contains(problem, apiWords) {
				t.Errorf("%s: the console says %q, words meant for a model or the API", c.what, apiWords)
			}
		}
	}
}
