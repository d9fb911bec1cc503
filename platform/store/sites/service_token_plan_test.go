package sites_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// planNode is one node of EXPLAIN (FORMAT JSON)'s plan.
type planNode struct {
	Type       string     `json:"Node Type"`
	Index      string     `json:"Index Name"`
	Relation   string     `json:"Relation Name"`
	ActualRows float64    `json:"Actual Rows"`
	Filtered   float64    `json:"Rows Removed by Filter"`
	Loops      float64    `json:"Actual Loops"`
	Plans      []planNode `json:"Plans"`
}

// explain runs EXPLAIN (ANALYZE, FORMAT JSON) of sql and returns its plan.
func explain(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) planNode {
	t.Helper()
	var raw []byte
	if err := pool.QueryRow(t.Context(), `EXPLAIN (ANALYZE, FORMAT JSON) `+sql, args...).Scan(&raw); err != nil {
		t.Fatalf("explain: %v", err)
	}
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		t.Fatalf("explain's plan %s: %v", raw, err)
	}
	return out[0].Plan
}

// walk calls fn for n and every node under it.
func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// endedPerSite is how many ended tokens seedEndedTokens gives each site.
const endedPerSite = 4000

// seedEndedTokens registers two sites, acme and other, each with
// endedPerSite tokens, token i of them ended i minutes before base:
// revoked when i is even, expired when it is odd. Each site also has 30
// active tokens, 15 that expire in the future and 15 that never do.
func seedEndedTokens(t *testing.T, s *sites.Store, pool *pgxpool.Pool) (acme, other sites.Site, base time.Time) {
	t.Helper()
	ctx := t.Context()
	acme = mustCreate(t, s, "acme")
	other = mustCreate(t, s, "other")
	base = time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	for _, site := range []sites.Site{acme, other} {
		if _, err := pool.Exec(ctx, `
			INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, created_at, revoked, revoked_at, expires_at)
			SELECT gen_random_uuid(), $1, 'ended ' || i, sha256(convert_to($4 || ' ' || i, 'UTF8')), 'egs_x',
			       $2::timestamptz - i * interval '1 minute' - interval '400 days',
			       i % 2 = 0, CASE WHEN i % 2 = 0 THEN $2::timestamptz - i * interval '1 minute' END,
			       CASE WHEN i % 2 = 1 THEN $2::timestamptz - i * interval '1 minute' END
			FROM generate_series(1, $3) i`, site.ID, base, endedPerSite, site.Slug); err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `
			INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, expires_at)
			SELECT gen_random_uuid(), $1, 'active ' || i, sha256(convert_to($2 || ' active ' || i, 'UTF8')), 'egs_x',
			       CASE WHEN i % 2 = 0 THEN now() + i * interval '1 day' END
			FROM generate_series(1, 30) i`, site.ID, site.Slug); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE service_tokens`); err != nil {
		t.Fatal(err)
	}
	return acme, other, base
}

// The owner's page lists the 20 tokens of a site that ended last. With
// thousands of ended tokens (an owner who issues and revokes in a loop),
// that must be read from an index in the page's order, stopping after the
// 20 (and the few active tokens the index holds before them), not by
// reading and sorting every ended token of the site.
func TestRecentEndedTokensReadFromAnIndex(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme, _, _ := seedEndedTokens(t, s, pool)

	plan := explain(t, pool, sites.RecentEndedTokens, acme.ID, time.Time{}, 20)
	var scans []string
	plan.walk(func(n planNode) {
		switch n.Type {
		case "Sort", "Incremental Sort":
			t.Errorf("the plan sorts (%s): %+v", n.Type, plan)
		case "Seq Scan", "Bitmap Heap Scan":
			t.Errorf("the plan reads service_tokens by a %s: %+v", n.Type, plan)
		case "Index Scan", "Index Only Scan":
			scans = append(scans, n.Index)
			t.Logf("%s of %s: %v rows, %v removed by its filter", n.Type, n.Index, n.ActualRows, n.Filtered)
			// The 20 ended, and before them at most the site's active
			// tokens that expire in the future.
			if read := (n.ActualRows + n.Filtered) * n.Loops; read > 20+15 {
				t.Errorf("the index scan of %s read %v rows, want at most 35", n.Index, read)
			}
		}
	})
	if len(scans) != 1 {
		t.Errorf("index scans %q, want one", scans)
	}

	// And the page still gets the 20 that ended last, the latest first.
	got, err := s.ListRecentServiceTokens(ctx, acme.ID, time.Time{}, 20)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range got.Ended {
		names = append(names, st.Name)
	}
	var want []string
	for i := 1; i <= 20; i++ {
		want = append(want, fmt.Sprintf("ended %d", i))
	}
	// The 3980 older ones are counted up to the bound.
	if fmt.Sprint(names) != fmt.Sprint(want) || got.EndedNotShown != sites.MaxEndedTokensCounted || !got.MoreEndedNotShown || len(got.Active) != 30 {
		t.Errorf("ended %q, %d not shown (more: %v), %d active; want %q, more than %d, 30", names, got.EndedNotShown, got.MoreEndedNotShown, len(got.Active), want, sites.MaxEndedTokensCounted)
	}
}

// The page also says how many older tokens ended. Before, that count read
// every ended token of the site on every view of the page; it reads them
// from the same index, in the same order, and stops after the bound (and
// the few active tokens the index holds before them).
func TestEndedTokensCountIsBounded(t *testing.T) {
	s, pool := newStore(t)
	acme, _, _ := seedEndedTokens(t, s, pool)
	limit := 20 + sites.MaxEndedTokensCounted + 1
	plan := explain(t, pool, sites.CountEndedTokens, acme.ID, time.Time{}, limit)
	plan.walk(func(n planNode) {
		switch n.Type {
		case "Sort", "Incremental Sort":
			t.Errorf("the plan sorts (%s): %+v", n.Type, plan)
		case "Seq Scan", "Bitmap Heap Scan":
			t.Errorf("the plan reads service_tokens by a %s: %+v", n.Type, plan)
		case "Index Scan", "Index Only Scan":
			t.Logf("%s of %s: %v rows, %v removed by its filter", n.Type, n.Index, n.ActualRows, n.Filtered)
			if read := (n.ActualRows + n.Filtered) * n.Loops; read > float64(limit+15) {
				t.Errorf("the index scan of %s read %v rows, want at most %d", n.Index, read, limit+15)
			}
		}
	})
	var counted int
	if err := pool.QueryRow(t.Context(), sites.CountEndedTokens, acme.ID, time.Time{}, limit).Scan(&counted); err != nil || counted != limit {
		t.Errorf("counted %d (%v), want %d", counted, err, limit)
	}
}

// Pruning, every minute on one replica, usually finds nothing to delete:
// it looks for ended tokens past the retention in the index of ended
// tokens, site by site, rather than reading every token.
func TestPruneFindsEndedTokensByTheIndex(t *testing.T) {
	s, pool := newStore(t)
	_, _, base := seedEndedTokens(t, s, pool)
	var raw []byte
	// Without ANALYZE: EXPLAIN alone deletes nothing.
	if err := pool.QueryRow(t.Context(), `EXPLAIN (FORMAT JSON) `+sites.PruneEndedTokens, base.AddDate(0, 0, -400), 5000).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		t.Fatalf("explain's plan %s: %v", raw, err)
	}
	var scans []string
	out[0].Plan.walk(func(n planNode) {
		if n.Index != "" {
			scans = append(scans, n.Index)
		}
		if n.Type == "Seq Scan" && n.Relation == "service_tokens" {
			t.Errorf("the plan reads every token: %s", raw)
		}
	})
	if !slices.Contains(scans, "service_tokens_site_ended_idx") {
		t.Errorf("index scans %q, want one of service_tokens_site_ended_idx: %s", scans, raw)
	}
	if n := count(t, pool, `SELECT count(*) FROM service_tokens`); n != 2*(endedPerSite+30) {
		t.Errorf("%d tokens after EXPLAIN, want %d", n, 2*(endedPerSite+30))
	}
}
