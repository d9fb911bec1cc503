package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// startSignIn sends b to the authorization endpoint and returns the ERP
// authorization URL erpgate redirects it to, and the flow's state in it.
func (r *oauthRig) startSignIn(b *headlessBrowser) (*url.URL, string) {
	r.t.Helper()
	resp, err := b.HC.Get(r.authorizeURL(nil))
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	erp, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || erp.Query().Get("state") == "" {
		r.t.Fatalf("authorize: HTTP %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return erp, erp.Query().Get("state")
}

// TestOAuthCallbackInAnotherBrowserEndsTheSignIn: when the ERP's callback
// for a sign-in arrives in a browser that lacks the flow's cookie (a
// leaked or planted callback URL), that attempt is refused and the flow
// is burned, so the original browser cannot finish it either; it gets a
// page saying the sign-in must be started again.
func TestOAuthCallbackInAnotherBrowserEndsTheSignIn(t *testing.T) {
	r := newOAuthRig(t)
	burned := func() int {
		// Counted in one row a minute (no one signed in): repeats.
		return queryInt(t, r.gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM auth_events WHERE event = 'login_denied' AND reason = 'wrong_browser'`)
	}
	strangers := map[string]func() *headlessBrowser{
		// A browser that has never seen erpgate: no binding cookie at all.
		"a browser without the cookie": r.browser,
		// A browser with a binding cookie of its own (it started another
		// sign-in): the cookie does not match the flow's.
		"a browser with another sign-in's cookie": func() *headlessBrowser {
			b := r.browser()
			r.startSignIn(b)
			return b
		},
	}
	for name, stranger := range strangers {
		t.Run(name, func(t *testing.T) {
			before := burned()
			owner := r.browser()
			erp, state := r.startSignIn(owner)

			other := stranger()
			_, _ = other.Run(context.Background(), http.MethodGet,
				r.callback(url.Values{"code": {"planted-code"}, "state": {state}}), nil)
			if p := other.LastPage(); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "another browser") {
				t.Errorf("the other browser: HTTP %d: %s", p.Status, pageText(p.Body))
			}

			// The owner now signs in at the ERP and comes back with a real
			// code: the flow is gone.
			final, err := owner.Run(context.Background(), http.MethodGet, erp.String(), nil)
			if err == nil {
				t.Fatalf("the original browser completed the sign-in after it was used elsewhere: %s", final)
			}
			p := owner.LastPage()
			if p.Status != http.StatusBadRequest || !strings.Contains(p.URL, "/oauth/callback") ||
				!strings.Contains(p.Body, "ended") || !strings.Contains(p.Body, "connect again") {
				t.Errorf("the original browser: HTTP %d at %s: %s", p.Status, p.URL, pageText(p.Body))
			}
			if got := burned() - before; got != 1 {
				t.Errorf("%d login_denied/wrong_browser events, want 1", got)
			}
			if n := queryInt(t, r.gw.DBURL, `SELECT count(*) FROM oauth_signin_flows
				WHERE id_hash = sha256(convert_to($1, 'UTF8')) AND (stage <> 'done' OR verifier_ciphertext IS NOT NULL)`, state); n != 0 {
				t.Errorf("the burned flow is still open or holds its verifier")
			}
		})
	}

	t.Run("a state nobody started records nothing", func(t *testing.T) {
		before := burned()
		other := r.browser()
		_, _ = other.Run(context.Background(), http.MethodGet,
			r.callback(url.Values{"code": {"x"}, "state": {"no-such-state-0123456789"}}), nil)
		if p := other.LastPage(); p.Status != http.StatusBadRequest {
			t.Errorf("HTTP %d: %s", p.Status, pageText(p.Body))
		}
		if got := burned() - before; got != 0 {
			t.Errorf("%d login_denied/wrong_browser events for an unknown state", got)
		}
	})
}
