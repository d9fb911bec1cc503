package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/pgtest"
)

// TestDevCommand runs `erpgate dev` against a test database: both demo
// sites are registered through the admin API, .data/dev.json describes
// them, their service tokens work, and a second run reuses the data and
// the tokens.
func TestDevCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("DATABASE_URL", pgtest.NewDatabase(t))
	t.Setenv("ERPGATE_LISTEN_ADDR", freeAddr(t))
	t.Setenv("ERPGATE_PUBLIC_BASE_URL", "")
	t.Setenv("ERPGATE_DEV_FRAPPE_ADDR", freeAddr(t))
	t.Setenv("ERPGATE_DEV_ACUMATICA_ADDR", freeAddr(t))

	runOnce := func() devState {
		t.Helper()
		path := filepath.Join(devDataDir, devStateFile)
		var before time.Time
		if fi, err := os.Stat(path); err == nil {
			before = fi.ModTime()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- runDev(ctx, nil) }()
		var state devState
		deadline := time.Now().Add(60 * time.Second)
		for {
			// dev.json is replaced atomically once everything is registered.
			if fi, err := os.Stat(path); err == nil && fi.ModTime().After(before) {
				state = readDevState(path)
				break
			}
			select {
			case err := <-done:
				cancel()
				t.Fatalf("dev stopped early: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatal("dev did not write dev.json")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(state.Sites) != 2 {
			t.Fatalf("dev.json lists %d sites, want the Frappe and Acumatica demo sites", len(state.Sites))
		}
		for _, site := range state.Sites {
			if site.ServiceToken == "" || len(site.Users) < 3 || site.MCPURL == "" {
				t.Errorf("%s: incomplete entry %+v", site.Slug, site)
			}
			cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
			tool := "get_current_user"
			args := map[string]any{}
			if site.Kind == "acumatica" {
				tool, args = "acumatica_get_customer", map[string]any{"CustomerID": firstAcumaticaCustomer(t, site)}
			}
			if r := callTool(t, cs, tool, args); r.IsError {
				t.Errorf("%s: %s failed: %s", site.Slug, tool, r.Text)
			}
			_ = cs.Close()
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("dev did not stop cleanly: %v", err)
		}
		return state
	}

	first := runOnce()
	second := runOnce()
	for i := range first.Sites {
		if first.Sites[i].ID != second.Sites[i].ID || first.Sites[i].ServiceToken != second.Sites[i].ServiceToken {
			t.Errorf("%s: the second run did not reuse the site and its token", first.Sites[i].Slug)
		}
	}
	if first.AdminToken != second.AdminToken {
		t.Error("the admin token changed between runs")
	}
}

func firstAcumaticaCustomer(t *testing.T, site devSite) string {
	t.Helper()
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	defer cs.Close()
	r := callTool(t, cs, "acumatica_list_customers", map[string]any{})
	if r.IsError {
		t.Fatalf("acumatica_list_customers: %s", r.Text)
	}
	results, _ := r.Structured["results"].([]any)
	if len(results) == 0 {
		t.Fatalf("no customers: %v", r.Structured)
	}
	id, _ := results[0].(map[string]any)["CustomerID"].(string)
	if id == "" {
		t.Fatalf("first customer has no CustomerID: %v", results[0])
	}
	return id
}
