package acumaticatest

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A user holding a live token occupies one seat; a new sign-in beyond
// the licence is refused with 429, the same user signs in again freely,
// and seats free up when tokens expire.
func TestSeatLimit(t *testing.T) {
	clock := newClock()
	s := newTestServer(t, Options{SeatLimit: 2, Now: clock.Now})
	passwordToken(t, s, "admin", "api")
	passwordToken(t, s, "ar.clerk", "api offline_access")
	passwordToken(t, s, "admin", "api") // same user: no new seat
	if s.SeatsInUse() != 2 {
		t.Fatalf("seats %d", s.SeatsInUse())
	}
	svc := s.Clients()[1]
	status, b := tokenRequest(t, s, url.Values{"grant_type": {"password"}, "username": {"no.canary"},
		"password": {"canary-P@ss1"}, "scope": {"api"}}, svc.ID, svc.Secret)
	if status != http.StatusTooManyRequests || !strings.Contains(string(b), "API Login Limit") {
		t.Errorf("third user: %d %s", status, b)
	}
	clock.Advance(61 * time.Minute)
	if s.SeatsInUse() != 0 {
		t.Errorf("seats after expiry %d", s.SeatsInUse())
	}
	passwordToken(t, s, "no.canary", "api")
}

// api:concurrent_access opens a server session per request unless the
// session cookie is replayed, so a stateless client runs out of seats.
func TestConcurrentAccessSessions(t *testing.T) {
	s := newTestServer(t, Options{SeatLimit: 2})
	tok := passwordToken(t, s, "admin", "api:concurrent_access api")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(cookie *http.Cookie) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.entityURL(Version24, "Currency", nil), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := do(nil)
	if first.StatusCode != http.StatusOK || len(first.Cookies()) != 1 || first.Cookies()[0].Name != "ASP.NET_SessionId" {
		t.Fatalf("first: %d %v", first.StatusCode, first.Cookies())
	}
	if resp := do(first.Cookies()[0]); resp.StatusCode != http.StatusOK || s.SeatsInUse() != 1 {
		t.Errorf("replayed cookie: %d seats %d", resp.StatusCode, s.SeatsInUse())
	}
	do(nil)
	resp := do(nil)
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/Frames/Error.aspx?") {
		t.Errorf("third session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The redirect leads to the site's error page, which anyone may read
	// and which answers 200 with the message as HTML.
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	page, b := call(t, http.MethodGet, s.Origin+loc.String(), tok, nil)
	if page.StatusCode != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(b), "The number of concurrent API logins (2) permitted by the license has been reached.") {
		t.Errorf("error page: %d %s %s", page.StatusCode, page.Header.Get("Content-Type"), b)
	}
}

// Sign-out with the Bearer token ends its session and frees the seat.
func TestLogoutFreesSeat(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	if s.SeatsInUse() != 1 {
		t.Fatalf("seats %d", s.SeatsInUse())
	}
	resp, _ := call(t, http.MethodPost, s.URL+"/entity/auth/logout", tok, strings.NewReader(""))
	if resp.StatusCode != http.StatusNoContent || s.SeatsInUse() != 0 {
		t.Errorf("logout: %d seats %d", resp.StatusCode, s.SeatsInUse())
	}
	if status, _ := get(t, s.entityURL(Version24, "Currency", nil), tok); status != http.StatusOK || s.SeatsInUse() != 1 {
		t.Errorf("the next call opens a new session: %d seats %d", status, s.SeatsInUse())
	}
}

// More requests in flight than the licence allows are declined with the
// IIS plain-text 429 and no Retry-After.
func TestConcurrencyLimit(t *testing.T) {
	s := newTestServer(t, Options{ConcurrencyLimit: 1})
	tok := passwordToken(t, s, "admin", "api")
	s.SetFault(Fault{PathPrefix: "/entity/Default/24.200.001/Currency", Times: 1, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.entityURL(Version24, "Currency", nil), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for s.inflight.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	resp, b := call(t, http.MethodGet, s.entityURL(Version24, "Currency", nil), tok, nil)
	if resp.StatusCode != http.StatusTooManyRequests || string(b) != "The custom error module does not recognize this error." ||
		resp.Header.Get("Retry-After") != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("over the limit: %d %q %v", resp.StatusCode, b, resp.Header)
	}
	cancel()
	<-done
}
