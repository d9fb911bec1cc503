package manage

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/web/pagekit"
)

// A notice says that something was done: a token revoked, a sign-out
// everywhere. A link anyone can make (…/manage?done=token-revoked) must
// not have erpgate's own page say so to an owner who did nothing, who
// would then trust that a leaked token no longer works. The page shows a
// notice after the redirect of the owner's own action, in their browser,
// and never from a link alone.
func TestNoticeIsShownOnlyAfterTheOwnersOwnAction(t *testing.T) {
	p := newPages(t)
	const user = "it.admin@demo.example"
	session := p.session(p.acme, user)
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	for _, done := range []string{"token-revoked", "person-revoked", "signed-out-everywhere"} {
		_, body, _ := send(t, p.srv.URL, "/sites/acme/manage?done="+done, nil, session, binding)
		if !strings.Contains(body, ownerPage+user) {
			t.Fatalf("the owner's page: %s", body)
		}
		if strings.Contains(body, html.EscapeString(notices[done])) {
			t.Errorf("a link with done=%s alone shows %q", done, notices[done])
		}
	}

	// The owner's own sign-out, in their browser: its notice is shown.
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(p.acme))
	status, _, header := send(t, p.srv.URL, "/sites/acme/manage/sign-out", url.Values{"csrf": {csrf}}, session, binding)
	if status != http.StatusSeeOther {
		t.Fatalf("sign-out: HTTP %d", status)
	}
	next, err := url.Parse(header.Get("Location"))
	if err != nil || next.Path != "/sites/acme/manage" || next.Query().Get("done") != "signed-out" {
		t.Fatalf("sign-out went to %q", header.Get("Location"))
	}
	if _, body, _ := send(t, p.srv.URL, next.RequestURI(), nil, binding); !strings.Contains(body, html.EscapeString(notices["signed-out"])) {
		t.Errorf("after the owner's sign-out, the page lacks %q: %s", notices["signed-out"], body)
	}
	// The same address in another browser shows no notice.
	other := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("c", 43)}
	if _, body, _ := send(t, p.srv.URL, next.RequestURI(), nil, other); strings.Contains(body, html.EscapeString(notices["signed-out"])) {
		t.Errorf("the sign-out's address opened in another browser shows %q", notices["signed-out"])
	}
}
