package sites_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// A page lists a site's active tokens and only the latest to end:
// revoked or expired, by when that happened (whichever came first), not
// when the token was issued; older ones are counted. Tokens from before
// since (a move to another tenant) are neither listed nor counted, and
// another site's never.
func TestListRecentServiceTokensBoundsTheEndedOnes(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	other := mustCreate(t, s, "other")
	mustPutAPI(t, s, other, "key", "secret")
	issue := func(site sites.Site, name string) sites.ServiceToken {
		t.Helper()
		st, _, err := s.IssueServiceTokenWithLifetime(ctx, site.ID, name, 30)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	old := issue(acme, "before the move")
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = now() - interval '2 days', revoked = true, revoked_at = now() - interval '1 day' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Hour)
	active := issue(acme, "active")
	// Ended in this order, an hour apart: revoked 0..4, then one that
	// expired (issued first), then one revoked after it had expired.
	for i := range 5 {
		st := issue(acme, fmt.Sprintf("revoked %d", i))
		if _, err := pool.Exec(ctx, `UPDATE service_tokens SET revoked = true, revoked_at = now() - make_interval(mins => 50 - $2::int) WHERE id = $1`, st.ID, i); err != nil {
			t.Fatal(err)
		}
	}
	expired := issue(acme, "expired")
	late := issue(acme, "revoked after expiry")
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = now() - interval '59 minutes', expires_at = now() - interval '5 minutes' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = now() - interval '59 minutes', expires_at = now() - interval '50 minutes', revoked = true, revoked_at = now() WHERE id = $1`, late.ID); err != nil {
		t.Fatal(err)
	}
	issue(other, "other site's")

	got, err := s.ListRecentServiceTokens(ctx, acme.ID, since, 3)
	if err != nil {
		t.Fatal(err)
	}
	names := func(list []sites.ServiceToken) []string {
		var out []string
		for _, st := range list {
			out = append(out, st.Name)
		}
		return out
	}
	if a := names(got.Active); len(a) != 1 || a[0] != active.Name {
		t.Errorf("active %q, want only %q", a, active.Name)
	}
	// Ended: expired 5 min ago, revoked 4 at 46 min, 3 at 47 min ago;
	// "revoked after expiry" ended 50 minutes ago, when it expired.
	want := []string{"expired", "revoked 4", "revoked 3"}
	if e := names(got.Ended); fmt.Sprint(e) != fmt.Sprint(want) {
		t.Errorf("ended %q, want %q", e, want)
	}
	if got.EndedNotShown != 4 {
		t.Errorf("%d ended tokens not shown, want 4 (revoked 0 to 2 and the one revoked after expiry)", got.EndedNotShown)
	}
	all, err := s.ListRecentServiceTokens(ctx, acme.ID, time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Active) != 1 || len(all.Ended) != 8 || all.EndedNotShown != 0 || all.Ended[7].Name != old.Name {
		t.Errorf("without since: %q active, %q ended, %d not shown; want 1, 8 ending with %q, 0", names(all.Active), names(all.Ended), all.EndedNotShown, old.Name)
	}
}
