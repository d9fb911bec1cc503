package authserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/erpgate/erpgate/web/pagekit"
)

// Over https the binding cookie is a __Host- cookie (Secure, Path=/, no
// Domain); over plain http (development) it cannot be Secure, so it drops
// the prefix. Both are HttpOnly and SameSite=Lax.
func TestBrowserCookie(t *testing.T) {
	for _, tc := range []struct {
		base   string
		name   string
		secure bool
	}{
		{"https://gw.example", "__Host-erpgate_signin", true},
		{"http://127.0.0.1:8080", "erpgate_signin", false},
	} {
		kit, err := pagekit.New(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{kit: kit, deps: Deps{SignInTimeout: 10 * time.Minute}}
		w := httptest.NewRecorder()
		id, err := s.ensureBrowserID(w, httptest.NewRequest(http.MethodGet, "/oauth/authorize", nil))
		if err != nil {
			t.Fatal(err)
		}
		cookies := w.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%d cookies", len(cookies))
		}
		c := cookies[0]
		if c.Name != tc.name || c.Secure != tc.secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" || c.MaxAge != 600 {
			t.Errorf("base %s: cookie %+v", tc.base, c)
		}
		r := httptest.NewRequest(http.MethodPost, "/oauth/consent", nil)
		r.AddCookie(c)
		if got, ok := s.browserID(r); !ok || got != id {
			t.Errorf("base %s: browserID = %q, %v", tc.base, got, ok)
		}
	}
}

func TestCSRFTokenIsBoundToBrowserAndFlow(t *testing.T) {
	tok := csrfToken("browser-a", "flow-1")
	if !checkCSRF("browser-a", "flow-1", tok) {
		t.Fatal("the right token is refused")
	}
	for _, bad := range [][3]string{{"browser-b", "flow-1", tok}, {"browser-a", "flow-2", tok}, {"browser-a", "flow-1", ""}, {"browser-a", "flow-1", tok + "x"}} {
		if checkCSRF(bad[0], bad[1], bad[2]) {
			t.Errorf("accepted %v", bad)
		}
	}
}
