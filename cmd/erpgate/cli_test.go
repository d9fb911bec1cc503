package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// captureStdout runs fn with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	runErr := fn()
	os.Stdout = old
	_ = w.Close()
	return <-done, runErr
}

func TestMigrateCommand(t *testing.T) {
	db := pgtest.NewEmptyDatabase(t)
	t.Setenv("DATABASE_URL", db)
	ctx := context.Background()

	out, err := captureStdout(t, func() error { return run(ctx, []string{"migrate", "status"}) })
	if err != nil || !strings.Contains(out, "00001_init.sql") {
		t.Fatalf("status before up: %v\n%s", err, out)
	}
	if _, err := captureStdout(t, func() error { return run(ctx, []string{"migrate", "up"}) }); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name IN ('sites','service_tokens','usage_events')`).Scan(&tables); err != nil || tables != 3 {
		t.Fatalf("after up: %d tables, %v", tables, err)
	}
	if err := run(ctx, []string{"migrate", "sideways"}); err == nil {
		t.Error("an unknown direction was accepted")
	}
}

func TestMissingConfigurationListsEveryProblem(t *testing.T) {
	for _, k := range []string{"DATABASE_URL", "ERPGATE_PUBLIC_BASE_URL", "ERPGATE_ADMIN_TOKEN", "ERPGATE_ENCRYPTION_KEYS", "ERPGATE_CONFIG"} {
		t.Setenv(k, "")
	}
	t.Setenv("ERPGATE_UPSTREAM_BUDGET", "forever")
	err := run(context.Background(), []string{"serve"})
	if err == nil {
		t.Fatal("serve started without configuration")
	}
	for _, want := range []string{"DATABASE_URL", "ERPGATE_PUBLIC_BASE_URL", "ERPGATE_ADMIN_TOKEN", "ERPGATE_ENCRYPTION_KEYS", "ERPGATE_UPSTREAM_BUDGET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %s:\n%v", want, err)
		}
	}
}

// TestKeysRotate stores a credential under k1, rotates to k2 with the CLI,
// and then serves tool calls with only k2 configured.
func TestKeysRotate(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	db := pgtest.NewDatabase(t)
	gw := startGateway(t, db, nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))

	k2, err := secrets.GenerateKeySpec("k2")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", db)
	t.Setenv("ERPGATE_ENCRYPTION_KEYS", k2+","+gw.Keys)
	out, err := captureStdout(t, func() error { return run(context.Background(), []string{"keys", "rotate"}) })
	// Two credential fields, plus the OAuth token-signing key that every
	// replica creates at first start.
	if err != nil || !strings.Contains(out, `re-encrypted 3 secrets under key "k2"`) {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var stale int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM credentials WHERE key_id <> 'k2'`).Scan(&stale); err != nil || stale != 0 {
		t.Fatalf("%d credentials not under k2 (%v)", stale, err)
	}

	gw2 := startGateway(t, db, map[string]string{"ERPGATE_ENCRYPTION_KEYS": k2})
	cs := connect(t, gw2.URL+"/service/mcp", map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	if r := callTool(t, cs, "get_current_user", nil); r.IsError {
		t.Fatalf("after rotation: %s", r.Text)
	}
}
