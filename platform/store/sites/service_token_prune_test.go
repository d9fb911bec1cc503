package sites_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Pruning deletes the tokens that ended (were revoked or expired,
// whichever came first) before the cutoff, of every site, in several
// statements when there are many, and keeps every other token: active
// ones however old, those that ended since, and one whose end is not
// known. A pruned token is refused as it was when revoked.
func TestPruneServiceTokensDeletesThoseEndedBeforeTheCutoff(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	other := mustCreate(t, s, "other")
	mustPutAPI(t, s, other, "key", "secret")

	values := map[string]secrets.Secret{}
	// token issues a token of site named name and then sets its row
	// (created 200 days ago) with set, SQL over now() ($1 is its id).
	token := func(site sites.Site, name, set string) {
		t.Helper()
		st, value, err := s.IssueServiceTokenWithLifetime(ctx, site.ID, name, 0)
		if err != nil {
			t.Fatal(err)
		}
		values[name] = value
		if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = now() - interval '200 days'`+set+` WHERE id = $1`, st.ID); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	token(acme, "revoked 100 days ago", `, revoked = true, revoked_at = now() - interval '100 days'`)
	token(acme, "expired 100 days ago", `, expires_at = now() - interval '100 days'`)
	token(acme, "expired 100 days ago, revoked yesterday", `, expires_at = now() - interval '100 days', revoked = true, revoked_at = now() - interval '1 day'`)
	token(other, "of another site, revoked 100 days ago", `, revoked = true, revoked_at = now() - interval '100 days'`)
	gone := []string{"revoked 100 days ago", "expired 100 days ago", "expired 100 days ago, revoked yesterday", "of another site, revoked 100 days ago"}
	token(acme, "revoked 80 days ago", `, revoked = true, revoked_at = now() - interval '80 days'`)
	token(acme, "expired 80 days ago", `, expires_at = now() - interval '80 days'`)
	token(acme, "active, never expires", ``)
	token(acme, "active, expires in 10 days", `, expires_at = now() + interval '10 days'`)
	token(acme, "revoked 100 days ago, then restored by hand", `, revoked = false, revoked_at = now() - interval '100 days'`)
	token(acme, "revoked by hand without a time", `, revoked = true`)
	kept := []string{"revoked 80 days ago", "expired 80 days ago", "active, never expires", "active, expires in 10 days",
		"revoked 100 days ago, then restored by hand", "revoked by hand without a time"}
	// And many more than one statement deletes, ended 91 to 150 days ago.
	const many = 12000
	if _, err := pool.Exec(ctx, `
		INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, created_at, revoked, revoked_at, expires_at)
		SELECT gen_random_uuid(), $1, 'bulk ' || i, sha256(convert_to('bulk ' || i, 'UTF8')), 'egs_x', now() - interval '200 days',
		       i % 2 = 0, CASE WHEN i % 2 = 0 THEN now() - interval '91 days' - (i % 60) * interval '1 day' END,
		       CASE WHEN i % 2 = 1 THEN now() - interval '91 days' - (i % 60) * interval '1 day' END
		FROM generate_series(1, $2) i`, acme.ID, many); err != nil {
		t.Fatal(err)
	}

	deleted, err := s.PruneServiceTokens(ctx, time.Now().AddDate(0, 0, -90))
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(many + len(gone)); deleted != want {
		t.Errorf("deleted %d tokens, want %d", deleted, want)
	}
	var left []string
	for _, site := range []sites.Site{acme, other} {
		list, err := s.ListServiceTokens(ctx, site.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range list {
			left = append(left, st.Name)
		}
	}
	slices.Sort(left)
	slices.Sort(kept)
	if !slices.Equal(left, kept) {
		var extra []string
		for _, name := range left {
			if !slices.Contains(kept, name) && len(extra) < 10 {
				extra = append(extra, name)
			}
		}
		t.Errorf("%d tokens left, want %q; left among others %q", len(left), kept, extra)
	}
	for _, name := range gone {
		if _, _, err := s.ResolveServiceToken(ctx, values[name].Reveal()); !errors.Is(err, sites.ErrTokenInvalid) {
			t.Errorf("resolving %q after it was pruned: %v, want ErrTokenInvalid", name, err)
		}
	}
	if _, _, err := s.ResolveServiceToken(ctx, values["active, never expires"].Reveal()); err != nil {
		t.Errorf("an active token after pruning: %v", err)
	}
	if again, err := s.PruneServiceTokens(ctx, time.Now().AddDate(0, 0, -90)); err != nil || again != 0 {
		t.Errorf("a second run deleted %d (%v), want 0", again, err)
	}
}

// One replica prunes at a time: while another holds the pruning lock, a
// run deletes nothing; once it is done, the next run deletes.
func TestPruneServiceTokensLeavesThemToTheReplicaPruning(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	st, _, err := s.IssueServiceTokenWithLifetime(ctx, acme.ID, "revoked long ago", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = now() - interval '200 days', revoked = true, revoked_at = now() - interval '100 days' WHERE id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	other, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Rollback(ctx) }()
	if _, err := other.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, sites.PruneTokensLock); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Now().AddDate(0, 0, -90)
	if n, err := s.PruneServiceTokens(ctx, cutoff); err != nil || n != 0 {
		t.Errorf("while another replica prunes: deleted %d (%v), want 0", n, err)
	}
	if err := other.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneServiceTokens(ctx, cutoff); err != nil || n != 1 {
		t.Errorf("after: deleted %d (%v), want 1", n, err)
	}
	if n := count(t, pool, `SELECT count(*) FROM service_tokens WHERE id = $1`, st.ID); n != 0 {
		t.Errorf("%d rows of the token left, want 0", n)
	}
}
