package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestRevocationReachesEveryReplica runs two replicas on one database. A
// token used (and cached) on replica B and revoked through replica A stops
// working on B without any restart.
func TestRevocationReachesEveryReplica(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	db := pgtest.NewDatabase(t)
	a := startGateway(t, db, nil)
	b := startGateway(t, db, map[string]string{"ERPGATE_ENCRYPTION_KEYS": a.Keys})
	site := a.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for i := 0; i < 3; i++ {
		if status, _ := postRPC(t, b.URL+"/service/mcp", h, ping); status != http.StatusOK {
			t.Fatalf("replica B refused a valid token: %d", status)
		}
	}
	tokens, err := a.admin.listTokens(context.Background(), site.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tokens {
		if strings.HasPrefix(site.ServiceToken, tk.Prefix) {
			if err := a.admin.do(context.Background(), http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+tk.ID, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The invalidation travels through Postgres; wait for it without
	// asserting how fast it is (benchmarks measure that).
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, _ := postRPC(t, b.URL+"/service/mcp", h, ping)
		if status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B still accepts the revoked token (status %d)", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, _ := postRPC(t, a.URL+"/service/mcp", h, ping); status != http.StatusUnauthorized {
		t.Errorf("replica A accepts the revoked token: %d", status)
	}
}

// TestDeletedSiteLeavesNoUsableServiceToken: a site deleted on one
// replica takes its service tokens with it on every replica, and a site
// registered again under the same slug at the same ERP does not revive
// them.
func TestDeletedSiteLeavesNoUsableServiceToken(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	db := pgtest.NewDatabase(t)
	a := startGateway(t, db, nil)
	b := startGateway(t, db, map[string]string{"ERPGATE_ENCRYPTION_KEYS": a.Keys})
	service := userWithRole(t, sim, "service")
	site := a.registerFrappe(t, "acme", sim, service)
	h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, gw := range []*gateway{a, b} {
		if status, _ := postRPC(t, gw.URL+"/service/mcp", h, ping); status != http.StatusOK {
			t.Fatalf("%s refused a valid token: %d", gw.URL, status)
		}
	}
	if err := a.admin.do(context.Background(), http.MethodDelete, "/sites/"+site.ID, nil, nil); err != nil {
		t.Fatal(err)
	}
	if status, _ := postRPC(t, a.URL+"/service/mcp", h, ping); status != http.StatusUnauthorized {
		t.Errorf("the replica that deleted the site accepts its token: %d", status)
	}
	waitFor(t, 20*time.Second, "replica B to refuse the deleted site's token", func() bool {
		status, _ := postRPC(t, b.URL+"/service/mcp", h, ping)
		return status == http.StatusUnauthorized
	})
	again := a.registerFrappe(t, "acme", sim, service)
	if again.ID == site.ID {
		t.Fatal("the site came back with its id")
	}
	for _, gw := range []*gateway{a, b} {
		if status, _ := postRPC(t, gw.URL+"/service/mcp", h, ping); status != http.StatusUnauthorized {
			t.Errorf("%s accepts the deleted site's token on the new acme: %d", gw.URL, status)
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM service_tokens`); n != 1 {
		t.Errorf("%d service tokens, want the new site's one", n)
	}
}

// TestRevocationIsNotHeldUpBySettingsReloads: replica B's pool is busy
// (every connection taken, as under a burst of slow queries) while the
// operator changes settings through replica A and then revokes a service
// token. The settings reloads must not hold up B's invalidation
// listener: the revocation, a notification behind them on the same
// channel, must still reach B's cache, which needs no pool to drop an
// entry. Before, each settings notification reloaded the settings on the
// listener's goroutine, waiting up to 5 s for a connection, and the
// revoked token stayed usable on B behind them.
func TestRevocationIsNotHeldUpBySettingsReloads(t *testing.T) {
	ctx := context.Background()
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	db := pgtest.NewDatabase(t)
	a := startGateway(t, db, nil)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "2")
	u.RawQuery = q.Encode()
	b := startGateway(t, u.String(), map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": a.Keys})
	site := a.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	h := map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for range 3 {
		if status, _ := postRPC(t, b.URL+"/service/mcp", h, ping); status != http.StatusOK {
			t.Fatalf("replica B refused a valid token: %d", status)
		}
	}

	// B's pool is busy until the end of the test.
	busy := make([]*pgxpool.Conn, 0, 2)
	for range 2 {
		c, err := b.App.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		busy = append(busy, c)
	}
	defer func() {
		for _, c := range busy {
			c.Release()
		}
	}()

	for i := range 6 {
		if err := a.admin.do(ctx, http.MethodPut, "/settings/max_records", map[string]any{"value": 100 + i}, nil); err != nil {
			t.Fatal(err)
		}
	}
	tokens, err := a.admin.listTokens(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tokens {
		if strings.HasPrefix(site.ServiceToken, tk.Prefix) {
			if err := a.admin.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+tk.ID, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// As in TestRevocationReachesEveryReplica: the bound only says that
	// the revocation arrives before the cache's 30 s backstop would drop
	// the token anyway.
	// While B's pool stays busy it cannot look the token up again (503).
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, _ := postRPC(t, b.URL+"/service/mcp", h, ping)
		if status != http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B still accepts the revoked token (status %d)", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range busy {
		c.Release()
	}
	busy = nil
	if status, _ := postRPC(t, b.URL+"/service/mcp", h, ping); status != http.StatusUnauthorized {
		t.Errorf("replica B with its pool free again: %d for the revoked token, want 401", status)
	}
}
