package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestOAuthAuthorizeWithoutState: OAuth 2.1 lets a client that uses PKCE
// leave state out, and the MCP TypeScript SDK does when its provider has
// no state(); the whole sign-in then works and its answer carries no
// state. Before, fosite's minimum of 8 characters refused a missing state
// on an error page. A state that is present keeps its bounds.
func TestOAuthAuthorizeWithoutState(t *testing.T) {
	r := newOAuthRig(t)

	t.Run("a request without state signs in and gets a working token", func(t *testing.T) {
		b := r.browser()
		final, err := b.Run(context.Background(), http.MethodGet, r.authorizeURL(func(q url.Values) { q.Del("state") }), nil)
		if err != nil {
			t.Fatalf("sign-in without state: %v (last page: HTTP %d: %s)", err, b.LastPage().Status, pageText(b.LastPage().Body))
		}
		q := final.Query()
		if q.Get("code") == "" || q.Get("iss") != r.gw.URL {
			t.Fatalf("authorization response %s lacks code or iss", final)
		}
		if _, has := q["state"]; has {
			t.Errorf("authorization response %s carries a state the client never sent", final)
		}
		status, tok := r.exchange(q.Get("code"))
		access, _ := tok["access_token"].(string)
		if status != http.StatusOK || access == "" {
			t.Fatalf("token exchange: HTTP %d %v", status, tok)
		}
		if err := callAsUser(r.site.MCPURL, access, r.user.Email, 1); err != nil {
			t.Error(err)
		}
	})

	t.Run("a present state is returned unchanged", func(t *testing.T) {
		final, err := r.browser().Run(context.Background(), http.MethodGet, r.authorizeURL(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := final.Query().Get("state"); got != "rig-state-1234" {
			t.Errorf("state %q, want rig-state-1234", got)
		}
	})

	for name, state := range map[string]string{
		"a state shorter than 8 characters": "abc",
		"a state longer than 1 KiB":         strings.Repeat("s", 1025),
	} {
		t.Run(name+" is refused on a page", func(t *testing.T) {
			status, location, text := pageNoFollow(t, r.authorizeURL(func(q url.Values) { q.Set("state", state) }))
			if status != http.StatusBadRequest || location != "" || !strings.Contains(text, "state") {
				t.Errorf("HTTP %d to %q: %s", status, location, text)
			}
		})
	}
}
