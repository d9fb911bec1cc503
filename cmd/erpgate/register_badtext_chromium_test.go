package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumRegistrationClientStepBadText pastes a client id that
// PostgreSQL cannot store (a NUL character, as a bad copy from a PDF or a
// terminal gives) and one longer than erpgate keeps. Each is refused on the
// client step itself, in a sentence about what was wrong, with the typed id
// kept: before, the NUL gave "Something went wrong" (500) and the long id
// was told to "paste both" fields that were both pasted.
func TestChromiumRegistrationClientStepBadText(t *testing.T) {
	r := newRegistration(t)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	ctx := r.ctx

	r.start("frappe", "Bad Paste Ltd", sim.URL, nil)
	waitForTitle(t, ctx, "Create the OAuth client")
	stepPath := browserResult(t, ctx, "read the path", chromedp.Evaluate[string](`location.pathname`))

	cases := []struct {
		name, id, want string
	}{
		{"nul", "abc\x00def", "The client id holds a control character"},
		{"long", strings.Repeat("a", 201), "The client id is longer than 200 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// SetValue types through the DOM, which keeps a NUL as a
			// browser form sends it (%00).
			browserResult(t, ctx, "fill in the client", chromedp.Evaluate[bool](
				`document.querySelector('#client_id').value = `+jsString(c.id)+`; document.querySelector('#client_secret').value = 'secret'; true`))
			r.submit("submit the client", `form[action$="/client"] button[type="submit"]`)
			waitForTitle(t, ctx, "Create the OAuth client")
			r.shot("client-" + c.name)
			if res, ok := r.docs.last(stepPath + "/client"); !ok || res.status != 400 {
				t.Errorf("the client step answered %d (seen %v), want 400", res.status, ok)
			}
			r.expectText(c.name, c.want, "nothing was registered")
			if text := r.text(); strings.Contains(text, "Something went wrong") || strings.Contains(text, "Paste both") {
				t.Errorf("the page does not say what was wrong:\n%s", text)
			}
			kept := browserResult(t, ctx, "read the kept id", chromedp.Evaluate[string](`document.querySelector('#client_id').value`))
			if want := strings.ReplaceAll(c.id, "\x00", ""); kept != c.id && kept != want {
				t.Errorf("the typed client id was not kept: %q", kept)
			}
		})
	}
	// The refusal shows at the form's address, /register/{id}/client;
	// opened again from the address bar, history or another tab (a GET),
	// it is the registration's page, not "Method Not Allowed".
	for _, step := range []string{"client", "prove", "api"} {
		browserDo(t, ctx, "open the "+step+" address", chromedp.Navigate(r.gw.URL+stepPath+"/"+step))
		waitForTitle(t, ctx, "Create the OAuth client")
		if res, ok := r.docs.last(stepPath); !ok || res.status != 200 {
			t.Errorf("GET %s/%s ended at %d (seen %v), want the registration's page", stepPath, step, res.status, ok)
		}
	}
	r.shot("client-step-reopened")
	if n := r.count(`SELECT count(*) FROM pending_registrations WHERE client_id <> ''`); n != 0 {
		t.Errorf("%d registrations kept a refused client id", n)
	}
}

// jsString quotes s as a JavaScript string literal, a NUL included.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range s {
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteString(string("0123456789abcdef"[c>>4]))
			b.WriteString(string("0123456789abcdef"[c&15]))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// TestChromiumRegistrationUntrustedCertificate starts a registration of an
// ERP whose TLS certificate erpgate does not trust (self-signed, as many
// test instances have). Step 1 says that, with the typed address kept:
// before, it said the ERP "could not be reached", which sent the person
// to check an address that answered.
func TestChromiumRegistrationUntrustedCertificate(t *testing.T) {
	r := newRegistration(t)
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(untrusted.Close)
	ctx := r.ctx

	r.start("frappe", "Self Signed Ltd", untrusted.URL, nil)
	waitForTitle(t, ctx, "Register your ERP")
	r.shot("untrusted-certificate")
	r.expectText("untrusted certificate", "TLS certificate that erpgate does not trust")
	if text := r.text(); strings.Contains(text, "could not be reached") || strings.Contains(text, "x509") {
		t.Errorf("step 1 does not name the certificate:\n%s", text)
	}
	if got := browserResult(t, ctx, "read the kept value", chromedp.Evaluate[string](`document.querySelector('#base_url').value`)); got != untrusted.URL {
		t.Errorf("the typed address was lost: %q", got)
	}
}

// TestChromiumChooseSiteAddressOpened opens /oauth/site, where the form of
// /mcp's sign-in page posts the ERP address and whose refusals show at that
// address, with a GET (history, a reopened tab). Before, the browser showed
// net/http's bare "Method Not Allowed".
func TestChromiumChooseSiteAddressOpened(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)
	browserDo(t, ctx, "open /oauth/site", chromedp.Navigate(gw.URL+"/oauth/site"))
	waitForTitle(t, ctx, "This sign-in step cannot be opened on its own")
	saveScreenshot(t, ctx, "TestChromiumChooseSiteAddressOpened.png")
	text := pageBody(t, ctx)
	if strings.Contains(text, "Method Not Allowed") || !strings.Contains(text, "Go back to your AI client and connect again") {
		t.Errorf("GET /oauth/site says: %s", text)
	}
	if res, ok := docs.last("/oauth/site"); !ok || res.status != http.StatusMethodNotAllowed || res.headers.Get("Allow") != "POST" {
		t.Errorf("GET /oauth/site: %d, Allow %q (seen %v)", res.status, res.headers.Get("Allow"), ok)
	}
}

// TestChromiumFormAddressesReopened opens the addresses the owner's page
// and the approval page post their forms to with a GET, as history or a
// reopened tab does after a refusal shown there. Each is the page the form
// was on; before, they said "There is no page at this address".
func TestChromiumFormAddressesReopened(t *testing.T) {
	needChromium(t)
	_, gw, _ := startFrappeOAuthGateway(t, nil)
	ctx := newChromium(t)
	for _, action := range []string{"sign-in", "sign-out", "settings", "writes", "oauth-secret", "api-credential", "tokens", "tokens/revoke", "people/revoke", "status", "delete"} {
		browserDo(t, ctx, "open /manage/"+action, chromedp.Navigate(gw.URL+"/sites/acme/manage/"+action))
		if got := waitForTitle(t, ctx, "Manage site acme", "There is no page"); got != "Manage site acme" {
			t.Errorf("GET /sites/acme/manage/%s is %q", action, got)
		}
	}
	saveScreenshot(t, ctx, "TestChromiumFormAddressesReopened-manage.png")
	id := "01a24eeb-dd05-7d42-9238-28ac9f20f334"
	for _, action := range []string{"sign-in", "decide", "withdraw"} {
		browserDo(t, ctx, "open /approve/…/"+action, chromedp.Navigate(gw.URL+"/approve/"+id+"/"+action))
		if got := waitForTitle(t, ctx, "This approval link is not valid", "There is no page"); got != "This approval link is not valid" {
			t.Errorf("GET /approve/%s/%s is %q", id, action, got)
		}
	}
	saveScreenshot(t, ctx, "TestChromiumFormAddressesReopened-approve.png")
}

// TestChromiumRegistrationOfAnAddressThatIsNotTheERPKind starts a
// registration of a Frappe ERP at an address that answers HTTP but is not
// a Frappe site (a typo'd port, another web application). Step 1 says so,
// with the typed address kept; before, any HTTP answer let the person go
// on to create an OAuth client at whatever answered.
func TestChromiumRegistrationOfAnAddressThatIsNotTheERPKind(t *testing.T) {
	r := newRegistration(t)
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	ctx := r.ctx

	r.start("frappe", "Not Frappe Ltd", other.URL, nil)
	if title := waitForTitle(t, ctx, "Register your ERP", "Create the OAuth client"); title != "Register your ERP" {
		t.Fatalf("an address that is not a Frappe site led on to %q", title)
	}
	r.shot("not-frappe")
	r.expectText("not the kind", "The address "+other.URL+" does not answer as Frappe/ERPNext.")
	if got := browserResult(t, ctx, "read the kept value", chromedp.Evaluate[string](`document.querySelector('#base_url').value`)); got != other.URL {
		t.Errorf("the typed address was lost: %q", got)
	}
}

// TestChromiumRegistrationWhoseNameWasTakenMeanwhile: the site's short
// name is chosen when a registration starts, and the ERP's OAuth client is
// made with a redirect URI naming it. When that name is taken before the
// administrator's sign-in (an operator created a site with it), the
// registration cannot finish under another name: the page says so and
// what to do, instead of erpgate's internal-error page.
func TestChromiumRegistrationWhoseNameWasTakenMeanwhile(t *testing.T) {
	r := newRegistration(t)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	other := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(other.Close)
	admin := userWithRole(t, sim, "administrator")
	ctx := r.ctx

	r.start("frappe", "Race Ltd", sim.URL, nil)
	waitForTitle(t, ctx, "Create the OAuth client")
	slug := queryString(t, r.gw.DBURL, `SELECT slug FROM pending_registrations ORDER BY created_at DESC LIMIT 1`)
	id, secret := r.createFrappeClient(sim, admin)
	r.gw.registerFrappe(t, slug, other, userWithRole(t, other, "service"))
	r.signOutOfERP()
	r.pasteClient(id, secret)
	r.frappeLogin(admin)
	title := waitForTitle(t, ctx, "This registration cannot finish", "Something went wrong", "erpgate could not")
	r.shot("name-taken")
	if title != "This registration cannot finish" {
		t.Fatalf("a registration whose name was taken meanwhile ends on %q:\n%s", title, r.text())
	}
	r.expectText("name taken", "Race Ltd", "start the registration again", "delete the OAuth client")
	if n := r.count(`SELECT count(*) FROM sites WHERE base_url LIKE '` + sim.URL + `%'`); n != 0 {
		t.Errorf("%d sites for the ERP whose registration could not finish", n)
	}
}
