package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// expiryStamp is a token's expiry as the pages show it (UTC, to the
// minute), read from the database; "" when it never expires.
func expiryStamp(t *testing.T, gw *gateway, name string) string {
	t.Helper()
	return queryString(t, gw.DBURL, `SELECT coalesce(to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), '') FROM service_tokens WHERE name = $1`, name)
}

// lifetimeChoices reads the choices of the select sel: value=label, and
// which is selected.
func lifetimeChoices(t *testing.T, ctx context.Context, sel string) (options []string, selected string) {
	t.Helper()
	options = browserResult(t, ctx, "read the expiry choices", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("`+sel+` option")].map(o => o.value + "=" + o.textContent.trim())`))
	selected = browserResult(t, ctx, "read the chosen expiry", chromedp.Evaluate[string](`document.querySelector("`+sel+`").value`))
	return options, selected
}

var wantLifetimeChoices = []string{"30=30 days", "90=90 days", "365=365 days", "never=Never"}

// TestChromiumOwnerPageIssuesExpiringTokens: the owner page offers a
// token's expiry (30, 90 or 365 days, or never; 90 unless changed), the
// page that shows the new token says when it expires, and the list shows
// each token's expiry, "never" for one without, and an expired token as
// expired, with nothing left to revoke. A value the form does not offer
// is refused and issues nothing.
func TestChromiumOwnerPageIssuesExpiringTokens(t *testing.T) {
	needChromium(t)
	sim, gw, _ := startFrappeOAuthGateway(t, nil) // the site's first token ("dev") never expires
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/acme/manage"
	signInToOwnerPage(t, ctx, gw, admin)

	options, selected := lifetimeChoices(t, ctx, "#token_expires")
	if strings.Join(options, "|") != strings.Join(wantLifetimeChoices, "|") || selected != "90" {
		t.Fatalf("expiry choices %q, %q chosen; want %q, 90 chosen", options, selected, wantLifetimeChoices)
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "svcexpiry-owner-form.png")

	navigate(t, ctx, "issue a token for the default 90 days",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "nightly report"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Service token nightly report")
	stamp := expiryStamp(t, gw, "nightly report")
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens WHERE name = 'nightly report' AND expires_at = created_at + interval '90 days'`); n != 1 || stamp == "" {
		t.Fatalf("%d tokens 'nightly report' expiring 90 days after issue", n)
	}
	if got := browserResult(t, ctx, "read the expiry", chromedp.Text(chromedp.CSS("#token-expires"))); got != "It expires on "+stamp+" UTC, 90 days from now." {
		t.Errorf("the new token's page says %q", got)
	}
	saveScreenshot(t, ctx, "svcexpiry-owner-token.png")

	navigate(t, ctx, "back to the owner page", chromedp.Click(chromedp.CSS(`a.button`)))
	waitForNewTitle(t, ctx, "Manage Test acme")
	navigate(t, ctx, "issue a token that never expires",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "forever"),
		chromedp.SetValue(chromedp.CSS("#token_expires"), "never"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Service token forever")
	if got := browserResult(t, ctx, "read the expiry", chromedp.Text(chromedp.CSS("#token-expires"))); got != "It never expires." {
		t.Errorf("the never-expiring token's page says %q", got)
	}
	if s := expiryStamp(t, gw, "forever"); s != "" {
		t.Errorf("the token chosen never to expire expires %s", s)
	}

	navigate(t, ctx, "back to the owner page", chromedp.Click(chromedp.CSS(`a.button`)))
	waitForNewTitle(t, ctx, "Manage Test acme")
	navigate(t, ctx, "send an expiry the form does not offer",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "too long"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#token_expires").add(new Option("1000 days", "1000", true, true))`),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Manage Test acme")
	if text := pageBody(t, ctx); !strings.Contains(text, "Choose when the token expires") {
		t.Errorf("an expiry the form does not offer: %s", text)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens WHERE name = 'too long'`); n != 0 {
		t.Errorf("%d tokens issued with an expiry the form does not offer", n)
	}

	// The 90 days pass for "nightly report".
	queryInt(t, gw.DBURL, `WITH moved AS (UPDATE service_tokens SET created_at = created_at - interval '91 days', expires_at = expires_at - interval '91 days' WHERE name = 'nightly report' RETURNING 1) SELECT count(*) FROM moved`)
	day := queryString(t, gw.DBURL, `SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM service_tokens WHERE name = 'nightly report'`)
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage Test acme")
	rows := map[string]string{}
	for _, row := range browserResult(t, ctx, "read the tokens", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('section[aria-labelledby="tokens"] tbody tr')].map(r => [r.cells[0].firstChild.textContent.trim(), ...[...r.cells].slice(1).map(c => c.innerText.replace(/\s+/g, " ").trim())].join("|"))`)) {
		name, rest, _ := strings.Cut(row, "|")
		rows[name] = rest
	}
	expires := func(name string) (string, string) {
		cells := strings.Split(rows[name], "|")
		if len(cells) != 4 {
			t.Fatalf("token %q's row %q", name, rows[name])
		}
		return cells[2], cells[3] // expires, action
	}
	if when, action := expires("nightly report"); when != "expired "+day || action != "" {
		t.Errorf("the expired token's row: expires %q, action %q", when, action)
	}
	for _, name := range []string{"dev", "forever"} {
		if when, action := expires(name); when != "never" || action != "Revoke" {
			t.Errorf("token %q's row: expires %q, action %q", name, when, action)
		}
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "svcexpiry-owner-list.png")
}

// TestChromiumConsoleIssuesAnExpiringFirstToken: the console's new-site
// form offers the first token's expiry (90 days unless changed), and the
// page that shows the token says when it expires.
func TestChromiumConsoleIssuesAnExpiringFirstToken(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	user := userWithRole(t, sim, "service")
	ctx := newChromium(t)

	signInToConsole(t, ctx, gw, "/console")
	submitAndWait(t, ctx, "add a site", "Add a site", chromedp.Click(chromedp.CSS(`#add-site`)))
	submitAndWait(t, ctx, "choose Frappe", "Add a site", chromedp.Click(chromedp.CSS(`a[href$="kind=frappe"]`)))
	options, selected := lifetimeChoices(t, ctx, "#token_expires")
	if strings.Join(options, "|") != strings.Join(wantLifetimeChoices, "|") || selected != "90" {
		t.Fatalf("expiry choices %q, %q chosen; want %q, 90 chosen", options, selected, wantLifetimeChoices)
	}
	for id, v := range map[string]string{"#display_name": "Acme Ltd", "#base_url": sim.URL, "#slug": "acme",
		"#api_api_key": user.APIKey, "#api_api_secret": user.APISecret, "#token_expires": "30"} {
		browserDo(t, ctx, "fill "+id, chromedp.SetValue(chromedp.CSS(id), v))
	}
	saveScreenshot(t, ctx, "svcexpiry-console-form.png")
	submitAndWait(t, ctx, "add the site", "Site acme is added", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM service_tokens WHERE name = 'service' AND expires_at = created_at + interval '30 days'`); n != 1 {
		t.Fatalf("%d first tokens expiring 30 days after issue", n)
	}
	if got := browserResult(t, ctx, "read the expiry", chromedp.Text(chromedp.CSS("#token-expires"))); got != "It expires on "+expiryStamp(t, gw, "service")+" UTC, 30 days from now." {
		t.Errorf("the first token's expiry reads %q", got)
	}
	saveScreenshot(t, ctx, "svcexpiry-console-added.png")
}
