package adminapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// issueTokens issues n tokens named "<prefix> 0" to "<prefix> n-1" on the
// site, in that order, and returns their ids.
func issueTokens(t *testing.T, h *harness, slug, prefix string, n int) []string {
	t.Helper()
	site, err := h.store.GetSiteBySlug(t.Context(), slug)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		st, _, err := h.store.IssueServiceTokenWithLifetime(t.Context(), site.ID, fmt.Sprintf("%s %d", prefix, i), 30)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID.String())
	}
	return ids
}

// tokenPage reads one page of a site's tokens over HTTP: the ids listed,
// next and the path of next_url.
func tokenPage(t *testing.T, srv *httptest.Server, path string) (status int, ids []string, next, nextPath string, body map[string]any) {
	t.Helper()
	status, body = overHTTP(t, srv, http.MethodGet, path, nil)
	if status != http.StatusOK {
		return status, nil, "", "", body
	}
	for _, v := range body["service_tokens"].([]any) {
		ids = append(ids, v.(map[string]any)["id"].(string))
	}
	next, _ = body["next"].(string)
	if u, _ := body["next_url"].(string); u != "" {
		nextPath = u[strings.Index(u, "/api/v1/"):]
	}
	return status, ids, next, nextPath, body
}

// endLongAgo marks the tokens as revoked longer ago than the retention of
// ended tokens keeps them.
func endLongAgo(t *testing.T, h *harness, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := h.pool.Exec(t.Context(), `UPDATE service_tokens SET revoked = true, revoked_at = now() - interval '401 days' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
}

// A client paging a site's tokens holds the next of a page while the
// pruning of ended tokens (ERPGATE_SERVICE_TOKEN_RETENTION_DAYS) deletes
// the token that page ended with. The next page must still come, starting
// where the deleted token stood: before, the cursor was the token's id,
// looked up for its place, and the client was told its cursor was not one
// of the site's (400) and had to start again.
func TestServiceTokenPageAfterItsLastTokenWasPruned(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	srv := httptest.NewServer(h.e)
	t.Cleanup(srv.Close)
	ids := issueTokens(t, h, "acme", "bot", 7)
	path := "/api/v1/sites/acme/service-tokens"

	status, first, next, nextPath, body := tokenPage(t, srv, path+"?limit=3")
	if status != http.StatusOK || fmt.Sprint(first) != fmt.Sprint(ids[:3]) || next == "" || nextPath == "" {
		t.Fatalf("the first page: HTTP %d %v; want the first 3 tokens and a next", status, body)
	}
	// The token the page ended with, and the one after it, end 401 days
	// ago and the pruning job deletes them.
	endLongAgo(t, h, ids[2], ids[3])
	n, err := h.store.PruneServiceTokens(t.Context(), time.Now().AddDate(0, 0, -400))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d tokens (%v), want 2", n, err)
	}
	status, second, next2, nextPath2, body := tokenPage(t, srv, nextPath)
	if status != http.StatusOK {
		t.Fatalf("the next page after its cursor's token was pruned: HTTP %d %v, want 200", status, body)
	}
	if fmt.Sprint(second) != fmt.Sprint(ids[4:7]) || next2 != "" || nextPath2 != "" {
		t.Fatalf("the next page lists %v (next %q), want %v and no next", second, next2, ids[4:7])
	}
	// The next passed as after reads the same page.
	if status, again, _, _, body := tokenPage(t, srv, path+"?limit=3&after="+next); status != http.StatusOK || fmt.Sprint(again) != fmt.Sprint(second) {
		t.Fatalf("after=<next>: HTTP %d %v, want %v", status, body, second)
	}
}

// A cursor is the site's own and made by erpgate: one of another site's
// pages, a bare token id of another site, one altered by a character or
// made up is refused with 400 and a plain sentence, never read as a place
// in this site's list, let alone a way to another site's tokens.
func TestServiceTokenCursorOfAnotherSiteOrForgedIsRefused(t *testing.T) {
	h := newHarness(t)
	for _, slug := range []string{"acme", "other"} {
		h.createSite(slug)
		h.connect(slug)
	}
	srv := httptest.NewServer(h.e)
	t.Cleanup(srv.Close)
	acmeIDs := issueTokens(t, h, "acme", "acme bot", 4)
	otherIDs := issueTokens(t, h, "other", "other bot", 4)

	status, _, acmeNext, _, body := tokenPage(t, srv, "/api/v1/sites/acme/service-tokens?limit=2")
	if status != http.StatusOK || acmeNext == "" {
		t.Fatalf("acme's first page: HTTP %d %v", status, body)
	}
	status, _, otherNext, _, body := tokenPage(t, srv, "/api/v1/sites/other/service-tokens?limit=2")
	if status != http.StatusOK || otherNext == "" {
		t.Fatalf("other's first page: HTTP %d %v", status, body)
	}
	// Each site's cursor reads that site's own next page.
	for slug, want := range map[string][]string{"acme": acmeIDs[2:], "other": otherIDs[2:]} {
		cur := map[string]string{"acme": acmeNext, "other": otherNext}[slug]
		if status, got, _, _, body := tokenPage(t, srv, "/api/v1/sites/"+slug+"/service-tokens?limit=2&after="+cur); status != http.StatusOK || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s's own cursor: HTTP %d %v, want %v", slug, status, body, want)
		}
	}

	// flip changes the character at i to the base64url character 32
	// places on, so that the bits it carries change even in the last
	// character of a check value, whose low bits carry none.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	flip := func(s string, i int) string {
		b := []byte(s)
		j := strings.IndexByte(alphabet, b[i])
		if j < 0 {
			t.Fatalf("cursor %q has %q at %d, not a base64url character", s, b[i], i)
		}
		b[i] = alphabet[(j+32)%64]
		return string(b)
	}
	bad := map[string]string{
		"acme's cursor":               acmeNext,
		"a bare token id of acme":     acmeIDs[1],
		"other's cursor, first byte":  flip(otherNext, 0),
		"other's cursor, middle byte": flip(otherNext, len(otherNext)/2),
		"other's cursor, last byte":   flip(otherNext, len(otherNext)-1),
		"other's cursor, cut short":   otherNext[:len(otherNext)-1],
		"other's cursor, longer":      otherNext + "A",
		"made up":                     "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"dots":                        "...",
	}
	for name, cur := range bad {
		status, body := overHTTP(t, srv, http.MethodGet, "/api/v1/sites/other/service-tokens?limit=2&after="+cur, nil)
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if status != http.StatusBadRequest || e["code"] != "invalid_request" || !strings.HasPrefix(msg, "after must be") {
			t.Errorf("%s on other's list: HTTP %d %v, want 400 invalid_request saying what after must be", name, status, body)
		}
		for _, id := range acmeIDs {
			if strings.Contains(fmt.Sprint(body), id) {
				t.Errorf("%s on other's list names acme's token %s: %v", name, id, body)
			}
		}
	}
}
