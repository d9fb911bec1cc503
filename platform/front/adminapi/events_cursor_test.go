package adminapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// eventPageOver reads one page of usage or audit events over HTTP: each
// event as name gives it, and the path of next_url ("" on the last page).
func eventPageOver(t *testing.T, srv *httptest.Server, path string, name func(map[string]any) string) (got []string, next string) {
	t.Helper()
	status, body := overHTTP(t, srv, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %v", path, status, body)
	}
	for _, e := range body["events"].([]any) {
		got = append(got, name(e.(map[string]any)))
	}
	if u, _ := body["next_url"].(string); u != "" {
		next = u[strings.Index(u, "/api/v1/"):]
	}
	return got, next
}

// The usage and audit events' cursors hold the place of a page's last
// event (its time, source and id), not a reference to it: when that event
// and the next are deleted meanwhile (their retention ended), the next
// page starts where they stood, as the service tokens' pages do.
func TestEventPagesAfterTheirLastEventWasDeleted(t *testing.T) {
	h := newHarness(t)
	h.createSite("acme")
	srv := httptest.NewServer(h.e)
	t.Cleanup(srv.Close)
	t0 := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute)
	requestID := func(e map[string]any) string { return fmt.Sprint(e["request_id"]) }
	// An audit event by its source's letter and its minute after t0.
	audit := func(e map[string]any) string {
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(e["occurred_at"]))
		if err != nil {
			t.Fatalf("occurred_at of %v: %v", e, err)
		}
		return fmt.Sprintf("%.1s%d", e["source"], int(at.Sub(t0)/time.Minute))
	}

	// Usage: r0 to r6, one a minute; newest first, r6 to r4 on the first
	// page of 3.
	h.seedUsage("acme", "ann@acme.example", "client-a", t0, 7)
	first, next := eventPageOver(t, srv, "/api/v1/usage-events?site=acme&limit=3", requestID)
	if fmt.Sprint(first) != "[r6 r5 r4]" || next == "" {
		t.Fatalf("the first usage page %v, next %q", first, next)
	}
	if _, err := h.pool.Exec(t.Context(), `DELETE FROM usage_events WHERE request_id IN ('r4', 'r3')`); err != nil {
		t.Fatal(err)
	}
	if second, more := eventPageOver(t, srv, next, requestID); fmt.Sprint(second) != "[r2 r1 r0]" || more != "" {
		t.Fatalf("the usage page after r4 and r3 were deleted: %v, next %q; want [r2 r1 r0] and none", second, more)
	}

	// Audit: sign-in and administration events alternating a minute
	// apart, a0 (administration) the oldest, s5 (sign-in) the newest.
	for i := range 6 {
		at := t0.Add(time.Duration(i) * time.Minute)
		var err error
		if i%2 == 0 {
			_, err = h.pool.Exec(t.Context(), `INSERT INTO admin_events (occurred_at, site_id, site_slug, actor_kind, actor, action, outcome)
				SELECT $1, id, slug, 'operator', 'admin', 'update_site', 'success' FROM sites WHERE slug = 'acme'`, at)
		} else {
			_, err = h.pool.Exec(t.Context(), `INSERT INTO auth_events (occurred_at, site_id, event, erp_user, client_id)
				SELECT $1, id, 'sign_in', 'ann@acme.example', 'client-a' FROM sites WHERE slug = 'acme'`, at)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	path := "/api/v1/audit-events?site=acme&limit=2&from=" + t0.Add(-time.Second).Format(time.RFC3339) + "&to=" + t0.Add(10*time.Minute).Format(time.RFC3339)
	first, next = eventPageOver(t, srv, path, audit)
	if fmt.Sprint(first) != "[s5 a4]" || next == "" {
		t.Fatalf("the first audit page %v, next %q", first, next)
	}
	if _, err := h.pool.Exec(t.Context(), `DELETE FROM admin_events WHERE occurred_at = $1`, t0.Add(4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(t.Context(), `DELETE FROM auth_events WHERE occurred_at = $1`, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	second, more := eventPageOver(t, srv, next, audit)
	if fmt.Sprint(second) != "[a2 s1]" || more == "" {
		t.Fatalf("the audit page after a4 and s3 were deleted: %v, next %q; want [a2 s1] and a next", second, more)
	}
	if last, none := eventPageOver(t, srv, more, audit); fmt.Sprint(last) != "[a0]" || none != "" {
		t.Fatalf("the last audit page %v, next %q; want [a0] and none", last, none)
	}
}
