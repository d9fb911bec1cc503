package livesettings

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var testDefaults = Defaults{RedactionAdd: []string{"from_env"}, MaxRecords: 1000, UserConcurrency: 3, UserPerMinute: 40,
	SiteConcurrency: 10, SitePerMinute: 300, CanaryInquiry: "MCPAccess"}

// TestTwoReplicasShareTheSettings: a change on one store is in force there
// at once and on a second store (another replica) after it loads, by the
// poll alone; values come with their source; resets and deleted sites
// take the default back.
func TestTwoReplicasShareTheSettings(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	a, b := New(pool, testDefaults, nil), New(pool, testDefaults, nil)
	for _, s := range []*Store{a, b} {
		if err := s.Load(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int
	b.OnChange(func(s *Snapshot) { seen = append(seen, s.Deployment.MaxRecords) })
	if v, src, _ := b.Current().Effective(uuid.Nil, RedactionAdd); !reflect.DeepEqual(v, []string{"from_env"}) || src != SourceDefault {
		t.Fatalf("default: %v from %s", v, src)
	}
	var site uuid.UUID
	if err := pool.QueryRow(ctx, `INSERT INTO sites (id, slug, kind, display_name, base_url) VALUES (gen_random_uuid(), 'acme', 'frappe', 'Acme', 'https://erp.example') RETURNING id`).Scan(&site); err != nil {
		t.Fatal(err)
	}

	before, after, err := a.Set(ctx, uuid.Nil, MaxRecords, 250)
	if err != nil || before != 1000 || after != 250 || a.Current().Deployment.MaxRecords != 250 {
		t.Fatalf("Set = %v, %v, %v; a has %d", before, after, err, a.Current().Deployment.MaxRecords)
	}
	if _, _, err := a.Set(ctx, site, ReadOnly, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Set(ctx, site, RedactionAdd, []string{"salary"}); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{WriteTools: []string{"create_sales_order"}, ServiceWrites: true, ServiceWriteApprover: "boss@acme.test"} {
		if _, _, err := a.Set(ctx, site, name, v); err != nil {
			t.Fatal(err)
		}
	}
	// b polls (no notification reaches it here).
	if err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Current().Version != a.Current().Version {
		t.Fatalf("b is at version %d, a at %d", b.Current().Version, a.Current().Version)
	}
	snap := b.Current()
	if snap.Deployment.MaxRecords != 250 || !snap.Site(site).ReadOnly || !reflect.DeepEqual(snap.Site(site).RedactionAdd, []string{"salary"}) {
		t.Errorf("b's snapshot: %+v, site %+v", snap.Deployment, snap.Site(site))
	}
	if sv := snap.Site(site); !reflect.DeepEqual(sv.WriteTools, []string{"create_sales_order"}) || !sv.ServiceWrites || sv.ServiceWriteApprover != "boss@acme.test" {
		t.Errorf("the site's write policy: %+v", sv)
	}
	if _, src, at := snap.Effective(site, MaxRecords); src != SourceDeployment || at.IsZero() {
		t.Errorf("a site's max records come from %s at %v", src, at)
	}
	if v, src, _ := snap.Effective(site, RedactionAdd); src != SourceSite || !reflect.DeepEqual(v, []string{"salary"}) {
		t.Errorf("the site's redaction: %v from %s", v, src)
	}
	if len(seen) == 0 || seen[len(seen)-1] != 250 {
		t.Errorf("b's subscriber saw %v", seen)
	}

	if _, _, err := a.Set(ctx, uuid.Nil, ReadOnly, true); !errors.Is(err, ErrScope) {
		t.Errorf("read_only for the deployment: %v", err)
	}
	if _, _, err := a.Set(ctx, site, UserConcurrency, 5); !errors.Is(err, ErrScope) {
		t.Errorf("user_concurrency per site: %v", err)
	}
	// A site's own row cap is the site's, in its values.
	if _, after, err := a.Set(ctx, site, MaxRecords, 5); err != nil || after != 5 || a.Current().Site(site).MaxRecords != 5 || a.Current().Deployment.MaxRecords != 250 {
		t.Errorf("max_records 5 for the site = %v, %v; the site has %d, the deployment %d", after, err, a.Current().Site(site).MaxRecords, a.Current().Deployment.MaxRecords)
	}
	if _, _, err := a.Set(ctx, uuid.New(), ReadOnly, true); !errors.Is(err, ErrNoSite) {
		t.Errorf("an unknown site: %v", err)
	}
	if before, after, err := a.Set(ctx, uuid.Nil, MaxRecords, nil); err != nil || before != 250 || after != 1000 {
		t.Errorf("reset = %v, %v, %v", before, after, err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, site); err != nil {
		t.Fatal(err)
	}
	b.Notified("") // as the trigger's notification would; it loads in the background
	deadline := time.Now().Add(20 * time.Second)
	for _, ok := b.Current().Sites[site]; ok || b.Current().Deployment.MaxRecords != 1000; _, ok = b.Current().Sites[site] {
		if time.Now().After(deadline) {
			t.Fatalf("after the site's deletion and the reset: %+v", b.Current())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
