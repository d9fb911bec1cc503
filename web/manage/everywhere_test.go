package manage

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// An owner signed in twice (their own laptop, and a shared computer they
// forgot to sign out of, or a cookie someone copied) signs out everywhere
// from one browser: the other session can then neither see the page nor
// change the site, on the replica they signed out at or on any other, and
// the ERP token it kept is gone. Another owner of the same site, and the
// same owner on another site, stay signed in.
func TestSignOutEverywhereEndsTheOwnersOtherSessionsOnEveryReplica(t *testing.T) {
	p := newPages(t)
	other := p.replica(t)
	const user, colleague = "it.admin@demo.example", "second.admin@demo.example"
	here, forgotten := p.session(p.acme, user), p.session(p.acme, user)
	// The ERP names one person in any case.
	shouted := p.session(p.acme, strings.ToUpper(user))
	theirs := p.session(p.acme, colleague)
	onBeta := p.session(p.beta, user)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(p.acme))
	for _, base := range []string{p.srv.URL, other} {
		if _, body, _ := send(t, base, "/sites/acme/manage", nil, forgotten); !strings.Contains(body, ownerPage+user) {
			t.Fatalf("the second session before signing out everywhere, at %s: %s", base, body)
		}
	}

	status, _, header := send(t, p.srv.URL, "/sites/acme/manage/sign-out-everywhere", url.Values{"csrf": {csrf}}, here, binding)
	if status != http.StatusSeeOther || !strings.Contains(header.Get("Location"), "/sites/acme/manage?done=signed-out-everywhere&check=") {
		t.Errorf("sign out everywhere: HTTP %d to %q", status, header.Get("Location"))
	}
	for _, c := range []*http.Cookie{here, forgotten, shouted} {
		for _, base := range []string{other, p.srv.URL} {
			if _, body, _ := send(t, base, "/sites/acme/manage", nil, c); strings.Contains(body, ownerPage) || !strings.Contains(body, signInPage+"acme") {
				t.Errorf("a session of %s after signing out everywhere, at %s, shows the owner's page", user, base)
			}
			form := url.Values{"csrf": {csrf}, "status": {"disabled"}}
			if status, body, _ := send(t, base, "/sites/acme/manage/status", form, c, binding); status != http.StatusForbidden || !strings.Contains(body, "Sign in to manage this site") {
				t.Errorf("a change with a session of %s after signing out everywhere, at %s: HTTP %d", user, base, status)
			}
		}
	}
	if site, err := p.h.deps.Store.GetSite(t.Context(), p.acme.ID); err != nil || site.Status != sites.StatusActive {
		t.Fatalf("the site after the ended sessions' changes: %q, %v (the second session still changed the site)", site.Status, err)
	}
	for _, c := range []*http.Cookie{here, forgotten} {
		if _, _, err := p.h.deps.Tokens.Get(t.Context(), p.acme.ID, c.Value); !errors.Is(err, pagesession.ErrNoToken) {
			t.Errorf("the ERP token of an ended session is still kept: %v", err)
		}
	}
	if n := countEvents(t, p, "owner_sign_out_everywhere", user); n != 1 {
		t.Errorf("%d owner_sign_out_everywhere events of %s on acme, want 1", n, user)
	}

	// Not another person's sessions, nor the person's on another site.
	if _, body, _ := send(t, other, "/sites/beta/manage", nil, onBeta); !strings.Contains(body, ownerPage+user) {
		t.Errorf("%s's session on beta after signing out everywhere on acme: %s", user, body)
	}
	if _, _, err := p.h.deps.Tokens.Get(t.Context(), p.acme.ID, theirs.Value); err != nil {
		t.Errorf("%s's kept ERP token after %s signed out everywhere: %v", colleague, user, err)
	}
	form := url.Values{"csrf": {csrf}, "status": {"disabled"}}
	if status, _, header := send(t, other, "/sites/acme/manage/status", form, theirs, binding); status != http.StatusSeeOther || !strings.Contains(header.Get("Location"), "?done=disabled&check=") {
		t.Errorf("%s's change after %s signed out everywhere: HTTP %d to %q", colleague, user, status, header.Get("Location"))
	}

	// A sign-in after it is a session of its own, even in the same second.
	if _, body, _ := send(t, other, "/sites/acme/manage", nil, p.session(p.acme, user)); !strings.Contains(body, ownerPage+user) {
		t.Errorf("a new sign-in after signing out everywhere: %s", body)
	}
}

// countEvents counts acme's admin_events of action by actor.
func countEvents(t *testing.T, p *pages, action, actor string) int {
	t.Helper()
	var n int
	if err := p.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_events WHERE site_id = $1 AND action = $2 AND actor = $3 AND outcome = 'success'`,
		p.acme.ID, action, actor).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
