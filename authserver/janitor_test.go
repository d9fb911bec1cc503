package authserver

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestJanitorSurvivesASilentConnection: the pooled connections go silent
// (a partition dropped the flows without a reset) before the janitor's
// pass. The janitor must not wait on one for as long as the kernel takes
// to give up (a quarter of an hour), while unauthenticated requests keep
// adding sign-in flows and clients nobody removes: a later pass, on a
// new connection, removes the expired sign-in flow.
func TestJanitorSurvivesASilentConnection(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	good, err := database.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Close)
	silencer := pgtest.NewSilencer(t, url)
	pool, err := database.Open(ctx, silencer.URL, database.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{deps: Deps{Store: storage.New(pool, keys, storage.Options{})}, log: zap.NewNop()}
	if _, err := good.Exec(ctx, `INSERT INTO oauth_signin_flows (id_hash, browser_hash, stage, authorize_query, client_id, resource, expires_at)
		VALUES (sha256('f'::bytea), sha256('b'::bytea), 'choose_site', '', 'c', 'r', now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	// Both of the pool's connections are open when they go silent.
	c1, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c1.Release()
	c2.Release()
	if n := silencer.SilenceAll(); n != 2 {
		t.Fatalf("silenced %d connections, want the pool's 2", n)
	}
	jctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop) // before the pool closes: frees a connection stuck in the janitor
	go srv.Janitor(jctx, 100*time.Millisecond)

	start := time.Now()
	deadline := start.Add(60 * time.Second)
	for {
		var left int
		if err := good.QueryRow(ctx, `SELECT count(*) FROM oauth_signin_flows`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			t.Logf("the expired flow was removed %v after the connections went silent", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired sign-in flow was still there 60 s after the connections went silent")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
