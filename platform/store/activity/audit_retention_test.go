package activity

import (
	"context"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestPruneAuditDeletesEventsPastTheCutoff: audit retention deletes the
// sign-in and administration events before its cutoff, from both tables,
// in several statements when there are many, and leaves the later ones,
// which the viewer still pages through.
func TestPruneAuditDeletesEventsPastTheCutoff(t *testing.T) {
	pool := pgtest.NewPool(t)
	ctx := context.Background()
	seedAudit(t, pool) // t0 to t0+4m: 4 sign-in and 2 administration events
	const many = 12000 // more than two statements' worth, in each table
	if _, err := pool.Exec(ctx, `
		INSERT INTO admin_events (id, occurred_at, site_id, site_slug, actor_kind, actor, action, outcome, reason)
		SELECT 1000 + i, $1::timestamptz - i * interval '1 millisecond', $2, 'site-a', 'registrant', '', 'register_start', 'refused', 'invalid_request: no'
		FROM generate_series(1, $3) i`, t0, siteA, many); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		INSERT INTO auth_events (id, occurred_at, site_id, event, reason)
		SELECT 1000 + i, $1::timestamptz - i * interval '1 millisecond', $2, 'login_denied', 'erp_access_denied'
		FROM generate_series(1, $3) i`, t0, siteA, many); err != nil {
		t.Fatal(err)
	}
	s := NewStore(pool)
	// The cutoff is t0+2m: the seeded events before it go (auth 1 and 2,
	// admin 1), with every bulk one.
	deleted, err := s.PruneAudit(ctx, t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2*many + 3); deleted != want {
		t.Errorf("deleted %d audit events, want %d", deleted, want)
	}
	page, err := s.Audit(ctx, Filter{From: t0.Add(-time.Hour), To: t0.Add(time.Hour)}, nil, MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		src int
		id  int64
	}
	var got []ref
	for _, e := range page.Events {
		got = append(got, ref{e.Source, e.ID})
	}
	want := []ref{{SourceAdmin, 2}, {SourceSignIn, 4}, {SourceSignIn, 3}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("left %v, want %v", got, want)
	}
	if again, err := s.PruneAudit(ctx, t0.Add(2*time.Minute)); err != nil || again != 0 {
		t.Errorf("a second run deleted %d (%v), want 0", again, err)
	}
}
