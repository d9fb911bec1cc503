package adminapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// A site's tokens are listed a page at a time, oldest first: revoked ones
// stay rows, so a site whose tokens were issued and revoked in a loop had
// every one of them in one answer. limit (1 to 500, 500 by default) sets
// the page's size and next_url reads the next page, until next is null;
// a cursor that is no token of the site is refused (and one made for
// another site, or forged: service_token_cursor_test.go).
func TestServiceTokensAreListedInPages(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	h.connect("acme")
	path := "/api/v1/sites/acme/service-tokens"
	const tokens = 503
	site, err := h.store.GetSiteBySlug(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range tokens {
		st, _, err := h.store.IssueServiceTokenWithLifetime(t.Context(), site.ID, fmt.Sprintf("loop %d", i), 30)
		if err != nil {
			t.Fatal(err)
		}
		if i < tokens-3 {
			if err := h.store.RevokeServiceToken(t.Context(), site.ID, st.ID); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, st.ID.String())
	}
	read := func(url string) ([]string, any, string) {
		t.Helper()
		r := h.call(http.MethodGet, url, nil)
		expect(t, r, http.StatusOK, "")
		body := r.JSON(t)
		var got []string
		for _, v := range body["service_tokens"].([]any) {
			got = append(got, v.(map[string]any)["id"].(string))
		}
		next, _ := body["next_url"].(string)
		return got, body["next"], next
	}
	// The default page.
	got, next, nextURL := read(path)
	cursor, _ := next.(string)
	if len(got) != 500 || got[0] != ids[0] || got[499] != ids[499] || cursor == "" {
		t.Fatalf("the first page has %d tokens, next %v; want the oldest 500 and a next", len(got), next)
	}
	if !strings.HasPrefix(nextURL, "http") || !strings.Contains(nextURL, "after="+cursor) {
		t.Fatalf("next_url %q", nextURL)
	}
	rest, next, _ := read(nextURL[strings.Index(nextURL, "/api/v1/"):])
	if len(rest) != 3 || rest[2] != ids[tokens-1] || next != nil {
		t.Fatalf("the second page has %d tokens, next %v; want the last 3 and none", len(rest), next)
	}
	// Pages of 7 reach every token once, in order.
	var all []string
	for url := path + "?limit=7"; url != ""; {
		var page []string
		page, _, url = read(url)
		if len(page) > 7 {
			t.Fatalf("a page of %d tokens with limit=7", len(page))
		}
		all = append(all, page...)
		if url != "" {
			url = url[strings.Index(url, "/api/v1/"):]
		}
	}
	if fmt.Sprint(all) != fmt.Sprint(ids) {
		t.Fatalf("pages of 7 listed %d tokens, want the %d in order", len(all), len(ids))
	}
	for _, bad := range []string{"?limit=0", "?limit=501", "?limit=x", "?after=x", "?after=" + uuid.NewString()} {
		expect(t, h.call(http.MethodGet, path+bad, nil), http.StatusBadRequest, "invalid_request")
	}
}
