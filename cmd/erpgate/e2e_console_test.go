package main

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/web/console"
	"github.com/erpgate/erpgate/web/pagekit"
)

// consoleBrowser is a cookie-keeping HTTP client that does not follow
// redirects, so that each answer can be checked.
type consoleBrowser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newConsoleBrowser(t *testing.T, base string) *consoleBrowser {
	jar, _ := cookiejar.New(nil)
	return &consoleBrowser{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *consoleBrowser) do(method, path string, form url.Values) (int, string, http.Header) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text), resp.Header
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf returns the CSRF token of the first form of the page at path.
func (b *consoleBrowser) csrfOf(path string) string {
	b.t.Helper()
	status, page, _ := b.do(http.MethodGet, path, nil)
	m := csrfInput.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: HTTP %d without a CSRF field:\n%s", path, status, page)
	}
	return m[1]
}

func (b *consoleBrowser) signIn(token string) (int, string, http.Header) {
	b.t.Helper()
	csrf := b.csrfOf("/console/sign-in")
	return b.do(http.MethodPost, "/console/sign-in", url.Values{"csrf": {csrf}, "token": {token}})
}

func (b *consoleBrowser) sessionCookie() *http.Cookie {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "erpgate_console" {
			return c
		}
	}
	b.t.Fatal("no console session cookie")
	return nil
}

// withCookie is a fresh client holding only the session cookie value.
func withCookie(t *testing.T, base, value string) *consoleBrowser {
	b := newConsoleBrowser(t, base)
	u, _ := url.Parse(base)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "erpgate_console", Value: value, Path: "/"}})
	return b
}

// adminEvents returns action/actor/outcome of the console's audit events.
func adminEvents(t *testing.T, g *gateway, action string) [][3]string {
	t.Helper()
	rows, err := g.App.pool.Query(context.Background(),
		`SELECT action, actor, outcome FROM admin_events WHERE action = $1 ORDER BY id`, action)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][3]string
	for rows.Next() {
		var e [3]string
		if err := rows.Scan(&e[0], &e[1], &e[2]); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// A console session is opened with the admin token: when the operator
// replaces a token that leaked, the sessions opened with it end too, on
// every replica that runs with the new one.
func TestConsoleSessionsEndWithTheirAdminToken(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newConsoleBrowser(t, gw.URL)
	if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in: HTTP %d", status)
	}
	taken := b.sessionCookie().Value
	same := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": gw.AdminToken, "ERPGATE_ENCRYPTION_KEYS": gw.Keys})
	if status, _, _ := withCookie(t, same.URL, taken).do(http.MethodGet, "/console/sites", nil); status != http.StatusOK {
		t.Fatalf("a replica with the same admin token refused the session: HTTP %d", status)
	}
	newToken, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	rotated := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": newToken.Value.Reveal(), "ERPGATE_ENCRYPTION_KEYS": gw.Keys})
	if status, _, h := withCookie(t, rotated.URL, taken).do(http.MethodGet, "/console/sites", nil); status != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "/console/sign-in") {
		t.Errorf("after the admin token was replaced, a session opened with the old one: HTTP %d to %q", status, h.Get("Location"))
	}
	fresh := newConsoleBrowser(t, rotated.URL)
	if status, _, _ := fresh.signIn(newToken.Value.Reveal()); status != http.StatusSeeOther {
		t.Fatalf("sign-in with the new token: HTTP %d", status)
	}
	if status, _, _ := fresh.do(http.MethodGet, "/console/sites", nil); status != http.StatusOK {
		t.Errorf("a session opened with the new token: HTTP %d", status)
	}
}

// TestConsoleSessionAttacks signs in to the console over HTTP and tries
// what an attacker would: a cookie with a forged signature, one re-signed
// past its expiry or for another purpose, a stolen copy after sign-out, a
// form without its CSRF token, and guessing the admin token until the
// per-source limit stops it.
func TestConsoleSessionAttacks(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newConsoleBrowser(t, gw.URL)
	if status, _, h := b.do(http.MethodGet, "/console/sites", nil); status != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "/console/sign-in") {
		t.Fatalf("signed out, /console/sites: HTTP %d to %q", status, h.Get("Location"))
	}
	status, _, h := b.signIn(gw.AdminToken)
	if status != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "/console/sites") {
		t.Fatalf("sign-in: HTTP %d to %q", status, h.Get("Location"))
	}
	for _, set := range h.Values("Set-Cookie") {
		if strings.HasPrefix(set, "erpgate_console=") && (!strings.Contains(set, "HttpOnly") || !strings.Contains(set, "Max-Age=28800") || !strings.Contains(set, "SameSite=Lax")) {
			t.Errorf("the session cookie: %s", set)
		}
	}
	cookie := b.sessionCookie()
	if status, page, _ := b.do(http.MethodGet, "/console/sites", nil); status != http.StatusOK || !strings.Contains(page, "Sign out") {
		t.Fatalf("signed in, /console/sites: HTTP %d:\n%s", status, page)
	}

	// The cookie is id.expiry.mac; the attacker knows its shape.
	parts := strings.Split(cookie.Value, ".")
	idRaw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || len(parts) != 3 {
		t.Fatalf("cookie %q", cookie.Value)
	}
	id := string(idRaw)
	keyring, err := secrets.ParseKeyring(gw.Keys)
	if err != nil {
		t.Fatal(err)
	}
	right := pagekit.NewSigner(console.SigningKey(keyring.DeriveKey(console.KeyPurpose), secrets.Secret(gw.AdminToken)))
	forged := map[string]string{
		"forged signature":   parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2])),
		"other key":          pagekit.NewSigner([]byte(strings.Repeat("k", 32))).Sign(console.Purpose, id, time.Now().Add(time.Hour)),
		"expired":            right.Sign(console.Purpose, id, time.Now().Add(-time.Second)),
		"other purpose":      right.Sign("owner", id, time.Now().Add(time.Hour)),
		"unknown session":    right.Sign(console.Purpose, id+"x", time.Now().Add(time.Hour)),
		"longer expiry only": parts[0] + "." + "9" + parts[1] + "." + parts[2],
	}
	for name, value := range forged {
		if status, _, _ := withCookie(t, gw.URL, value).do(http.MethodGet, "/console/sites", nil); status != http.StatusSeeOther {
			t.Errorf("%s: /console/sites answered HTTP %d, want the sign-in redirect", name, status)
		}
	}
	// The key's own signature with a later expiry is the real cookie's
	// session: the session row, not the cookie, decides.
	if status, _, _ := withCookie(t, gw.URL, right.Sign(console.Purpose, id, time.Now().Add(time.Hour))).do(http.MethodGet, "/console/sites", nil); status != http.StatusOK {
		t.Errorf("a cookie signed with the console key for the open session: HTTP %d", status)
	}

	// A form without the session's CSRF token changes nothing: not a
	// setting, not a site, not the session.
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	for _, form := range []struct {
		path string
		form url.Values
	}{
		{"/console/settings", url.Values{"name": {"max_records"}, "value": {"1"}}},
		{"/console/sites", url.Values{"site": {"acme"}, "action": {"delete"}, "confirm": {"acme"}}},
		{"/console/sites", url.Values{"site": {"acme"}, "action": {"disable"}, "csrf": {"forged"}}},
		{"/console/preflight", url.Values{"site": {"acme"}}},
	} {
		if status, _, _ := b.do(http.MethodPost, form.path, form.form); status != http.StatusForbidden {
			t.Errorf("POST %s %v without CSRF: HTTP %d", form.path, form.form, status)
		}
	}
	var stored, preflights int
	var siteStatus string
	if err := gw.App.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM live_settings), (SELECT count(*) FROM site_preflight), (SELECT status FROM sites WHERE slug = 'acme')`).Scan(&stored, &preflights, &siteStatus); err != nil || stored != 0 || preflights != 0 || siteStatus != "active" {
		t.Errorf("after the forged forms: %d settings, %d preflights, site %q, %v", stored, preflights, siteStatus, err)
	}
	if status, _, _ := b.do(http.MethodPost, "/console/sign-out", url.Values{}); status != http.StatusForbidden {
		t.Errorf("sign-out without CSRF: HTTP %d", status)
	}
	if status, _, _ := b.do(http.MethodPost, "/console/sign-out", url.Values{"csrf": {pagekit.CSRFToken("other", console.Purpose)}}); status != http.StatusForbidden {
		t.Errorf("sign-out with another cookie's CSRF: HTTP %d", status)
	}
	if status, _, _ := b.do(http.MethodGet, "/console/sites", nil); status != http.StatusOK {
		t.Fatalf("after refused sign-outs the session is gone: HTTP %d", status)
	}

	// Sign out; a copy of the cookie taken before is refused everywhere,
	// on this replica and on another one.
	stolen := cookie.Value
	other := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": gw.AdminToken, "ERPGATE_ENCRYPTION_KEYS": gw.Keys})
	if status, _, _ := withCookie(t, other.URL, stolen).do(http.MethodGet, "/console/sites", nil); status != http.StatusOK {
		t.Fatalf("before sign-out the other replica refused the session: HTTP %d", status)
	}
	csrf := b.csrfOf("/console/sites")
	if status, _, h := b.do(http.MethodPost, "/console/sign-out", url.Values{"csrf": {csrf}}); status != http.StatusSeeOther || !strings.HasSuffix(h.Get("Location"), "/console/sign-in") {
		t.Fatalf("sign-out: HTTP %d to %q", status, h.Get("Location"))
	}
	for _, base := range []string{gw.URL, other.URL} {
		if status, _, _ := withCookie(t, base, stolen).do(http.MethodGet, "/console/sites", nil); status != http.StatusSeeOther {
			t.Errorf("the stolen cookie after sign-out at %s: HTTP %d", base, status)
		}
		if status, _, _ := withCookie(t, base, stolen).do(http.MethodPost, "/console/sign-out", url.Values{"csrf": {csrf}}); status != http.StatusUnauthorized {
			t.Errorf("a form with the stolen cookie after sign-out at %s: HTTP %d", base, status)
		}
	}

	// The sign-in form itself needs its CSRF token.
	fresh := newConsoleBrowser(t, gw.URL)
	if status, _, _ := fresh.do(http.MethodPost, "/console/sign-in", url.Values{"token": {gw.AdminToken}}); status != http.StatusForbidden {
		t.Errorf("sign-in without CSRF: HTTP %d", status)
	}

	// Guessing: wrong tokens are refused, then the source's limit stops
	// even the right one.
	guesser := newConsoleBrowser(t, gw.URL)
	limited := false
	for i := range 30 {
		status, page, h := guesser.signIn("ega_wrong_guess_" + strings.Repeat("x", i))
		if status == http.StatusTooManyRequests {
			if h.Get("Retry-After") == "" || !strings.Contains(page, "Too many sign-in attempts") {
				t.Errorf("the limit's answer: %v\n%s", h, page)
			}
			limited = true
			break
		}
		if status != http.StatusUnauthorized || !strings.Contains(page, "That is not the admin token") {
			t.Fatalf("guess %d: HTTP %d\n%s", i, status, page)
		}
	}
	if !limited {
		t.Fatal("30 wrong guesses were not limited")
	}
	if status, _, _ := guesser.signIn(gw.AdminToken); status != http.StatusTooManyRequests {
		t.Errorf("after the limit, the right token: HTTP %d", status)
	}

	ins := adminEvents(t, gw, "console_sign_in")
	outs := adminEvents(t, gw, "console_sign_out")
	if len(ins) < 2 || ins[0] != [3]string{"console_sign_in", "console_session:" + ins[0][1][len("console_session:"):], "success"} || !strings.HasPrefix(ins[0][1], "console_session:") {
		t.Errorf("sign-in events %v", ins)
	}
	if len(outs) != 1 || outs[0][1] != ins[0][1] || outs[0][2] != "success" {
		t.Errorf("sign-out events %v (sign-in %v)", outs, ins[0])
	}
	// The refused guesses are counted in one row a minute (anyone may
	// guess): every guess and the limit's first refusal.
	if refused := queryInt(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events
		WHERE action = 'console_sign_in' AND outcome = 'refused' AND actor = 'console_sign_in'`); refused < 2 {
		t.Errorf("refused sign-ins recorded: %d of %v", refused, ins)
	}
}

// A site its owner paused can still be disabled by the operator in the
// console, making the disable theirs: the owner can then no longer
// enable it. Before, the console offered only Enable for a disabled
// site, so the operator could take over an owner's pause only by enabling
// the site first (letting everyone in meanwhile) or through the admin API.
func TestConsoleOperatorDisablesASiteItsOwnerPaused(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	// The owner paused it on the owner page.
	execSQL(t, gw.DBURL, `UPDATE sites SET status = 'disabled', disabled_by = 'owner' WHERE slug = 'acme'`)
	b := newConsoleBrowser(t, gw.URL)
	if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in: HTTP %d", status)
	}
	status, page, _ := b.do(http.MethodGet, "/console/sites", nil)
	if status != http.StatusOK {
		t.Fatalf("/console/sites: HTTP %d", status)
	}
	if !strings.Contains(page, `name="action" value="disable"`) {
		t.Errorf("the console offers no way to disable a site its owner paused:\n%s", page)
	}
	csrf := csrfInput.FindStringSubmatch(page)[1]
	if status, _, _ := b.do(http.MethodPost, "/console/sites", url.Values{"csrf": {csrf}, "site": {"acme"}, "action": {"disable"}}); status != http.StatusSeeOther {
		t.Fatalf("the operator's disable: HTTP %d", status)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM sites WHERE slug = 'acme' AND status = 'disabled' AND disabled_by = 'operator'`); n != 1 {
		t.Errorf("after the operator's disable, acme is not the operator's to enable")
	}
	_, page, _ = b.do(http.MethodGet, "/console/sites", nil)
	if strings.Contains(page, `name="action" value="disable"`) {
		t.Errorf("the console still offers to disable a site the operator disabled")
	}
}

// The settings page of a slug that names no site says so without
// repeating the link's text: a link cannot make the console tell the
// operator something of an attacker's choosing, as its notices cannot.
func TestConsoleSettingsOfNoSiteDoNotRepeatTheLink(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newConsoleBrowser(t, gw.URL)
	if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in: HTTP %d", status)
	}
	for _, site := range []string{"Your session expired. Sign in again at https://evil.example/console", "nosuch-site-of-evil"} {
		status, page, _ := b.do(http.MethodGet, "/console/settings?"+url.Values{"site": {site}}.Encode(), nil)
		if status != http.StatusNotFound {
			t.Errorf("?site=%s: HTTP %d, want 404", site, status)
		}
		if strings.Contains(page, "evil") {
			t.Errorf("?site=%s: the page repeats the link's text:\n%s", site, page)
		}
	}
}

// A site action posted without a site (a form sent before the page had
// one, or by hand) says that no site was named, in a sentence: it read
// "There is no site  (any more)."
func TestConsoleSiteActionWithoutASite(t *testing.T) {
	gw := startGateway(t, "", nil)
	b := newConsoleBrowser(t, gw.URL)
	if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in: HTTP %d", status)
	}
	_, page, _ := b.do(http.MethodGet, "/console/sites", nil)
	csrf := csrfInput.FindStringSubmatch(page)[1]
	status, page, _ := b.do(http.MethodPost, "/console/sites", url.Values{"csrf": {csrf}, "site": {""}, "action": {"disable"}})
	if status != http.StatusNotFound {
		t.Errorf("HTTP %d, want 404", status)
	}
	if text := pageText(page); !strings.Contains(text, "No site was named; nothing was changed.") || strings.Contains(text, "no site  (") {
		t.Errorf("the page says: %s", text)
	}
}

// A notice says what the operator just did: "Site acme is deleted", or
// "Site acme now sends people back to its own redirect URI. Remove the
// shared one from its OAuth client in the ERP". A link anyone can send the
// operator (…/console/sites?done=own-callback&site=acme) must not have the
// console say so when nothing was done: following that advice for a site
// still on the shared redirect URI would stop its people signing in. The
// console shows a notice after the redirect of the operator's own action
// in their session, and never from a link alone.
func TestConsoleNoticesFollowOnlyTheOperatorsOwnActions(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	b := newConsoleBrowser(t, gw.URL)
	if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("sign-in: HTTP %d", status)
	}
	for path, notice := range map[string]string{
		"/console/sites?done=own-callback&site=acme":         "now sends people back to its own redirect URI",
		"/console/sites?done=deleted&site=acme":              "Site acme is deleted",
		"/console/settings?done=changed&setting=max_records": "Max records per query is changed",
		"/console/preflight?done=ran&site=acme":              "The preflight of acme ran",
	} {
		status, page, _ := b.do(http.MethodGet, path, nil)
		if status != http.StatusOK {
			t.Errorf("%s: HTTP %d", path, status)
		}
		if strings.Contains(page, notice) {
			t.Errorf("a link to %s alone shows %q", path, notice)
		}
	}

	// The operator's own action: its redirect shows the notice, in this
	// session only.
	_, page, _ := b.do(http.MethodGet, "/console/sites", nil)
	csrf := csrfInput.FindStringSubmatch(page)[1]
	status, _, header := b.do(http.MethodPost, "/console/sites", url.Values{"csrf": {csrf}, "site": {"acme"}, "action": {"disable"}})
	if status != http.StatusSeeOther {
		t.Fatalf("disable: HTTP %d", status)
	}
	next, err := url.Parse(header.Get("Location"))
	if err != nil || next.Query().Get("done") != "disabled" {
		t.Fatalf("disable went to %q", header.Get("Location"))
	}
	if _, page, _ := b.do(http.MethodGet, next.RequestURI(), nil); !strings.Contains(page, "Site acme is now disabled.") {
		t.Errorf("after the operator's disable, the sites page lacks its notice:\n%s", pageText(page))
	}
	other := newConsoleBrowser(t, gw.URL)
	if status, _, _ := other.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("second sign-in: HTTP %d", status)
	}
	if _, page, _ := other.do(http.MethodGet, next.RequestURI(), nil); strings.Contains(page, "Site acme is now disabled.") {
		t.Error("the disable's address opened in another console session shows its notice")
	}
}
