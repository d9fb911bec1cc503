package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestMadeUpPageLinksAreBoundedPerSource: the pages anyone may open by a
// link (the ERP's answer to an administrator's sign-in, an approval
// link, a registration in progress, a site's owner page) look up what
// the link names in the database on every request, before anything else.
// A source sending made-up links cost a query each, as many as it liked.
// They now share the per-source bound of lookups that fail with the
// token doors: one source gets its burst (100, then ten a second) and
// then 429 with Retry-After, while another source is answered as before.
func TestMadeUpPageLinksAreBoundedPerSource(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	link := func(kind, n int) string {
		switch kind {
		case 0: // the ERP's answer to an administrator's sign-in
			return gw.URL + fmt.Sprintf("/oauth/callback?code=c&state=adm_made-up-%08d", n)
		case 1:
			return gw.URL + "/approve/" + uuid.NewString()
		case 2:
			return gw.URL + "/register/" + uuid.NewString()
		default:
			return gw.URL + fmt.Sprintf("/sites/made-up-%08d/manage", n)
		}
	}
	get := func(url, source string) (int, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Forwarded-For", source)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}
	attacker, other := "198.51.100.30", "203.0.113.30"
	start := time.Now()
	statuses := map[int]int{}
	for n := range 300 {
		status, h := get(link(n%4, n), attacker)
		statuses[status]++
		if status == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
			}
		}
	}
	t.Logf("300 made-up links from one source: %v", statuses)
	// The burst, and what ten a second refilled meanwhile.
	allowed := 100 + 10*int(time.Since(start).Seconds()+1)
	if looked := 300 - statuses[http.StatusTooManyRequests]; looked > allowed || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("300 made-up links from one source: %v, want at most %d looked up and the rest 429", statuses, allowed)
	}
	for kind := range 4 {
		if status, _ := get(link(kind, 1), other); status == http.StatusTooManyRequests || status >= 500 {
			t.Errorf("another source's made-up link (kind %d): HTTP %d", kind, status)
		}
	}
}

// TestOwnerPageViewsAreBoundedPerSource: a site's owner page is at a
// public address (/sites/{slug}/manage, next to its MCP URL), and every
// view looked the site up in the database, for anyone, signed in or not,
// as often as they liked. A view by someone not signed in as the owner
// now counts as a lookup of its source: past the burst (100, then ten a
// second) it is answered 429 with Retry-After; another source sees the
// page as before.
func TestOwnerPageViewsAreBoundedPerSource(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	get := func(source string) (int, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, gw.URL+"/sites/"+site.Slug+"/manage", nil)
		req.Header.Set("X-Forwarded-For", source)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}
	attacker, other := "198.51.100.40", "203.0.113.40"
	start := time.Now()
	statuses := map[int]int{}
	for range 300 {
		status, h := get(attacker)
		statuses[status]++
		if status == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
			}
		}
	}
	t.Logf("300 views of the owner page from one source: %v", statuses)
	allowed := 100 + 10*int(time.Since(start).Seconds()+1)
	if statuses[http.StatusOK] > allowed || statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("300 views of the owner page from one source: %v, want at most %d served and the rest 429", statuses, allowed)
	}
	if status, _ := get(other); status != http.StatusOK {
		t.Errorf("another source's view: HTTP %d", status)
	}
}
