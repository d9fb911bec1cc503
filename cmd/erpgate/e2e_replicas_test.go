package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

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
