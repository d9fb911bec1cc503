package invalidate

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newDatabase returns a migrated database's URL and a pool on it.
func newDatabase(t *testing.T) (string, *pgxpool.Pool) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	pool, err := database.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return url, pool
}

// listening starts a listener on the database at url until the test ends,
// and returns it healthy, with the site ids it is told of and its resets.
func listening(t *testing.T, url string) (*Listener, chan string, chan struct{}) {
	t.Helper()
	l := NewListener(url, nil)
	got := make(chan string, 16)
	resets := make(chan struct{}, 16)
	l.OnSite(func(id string) { got <- id })
	l.OnReset(func() { resets <- struct{}{} })
	go l.Run(t.Context())
	waitFor(t, "the listener", l.Healthy)
	return l, got, resets
}

func TestSiteChangesNotifyAndResetsOnReconnect(t *testing.T) {
	url, pool := newDatabase(t)
	ctx := t.Context()

	l, got, resets := listening(t, url)

	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'acme', 'frappe', 'https://erp.acme.example', 'Acme')`, site); err != nil {
		t.Fatal(err)
	}
	token := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO service_tokens (id, site_id, token_hash, prefix) VALUES ($1, $2, decode(repeat('ab', 32), 'hex'), 'egs_x')`, token, site); err != nil {
		t.Fatal(err)
	}
	for _, change := range []string{
		`UPDATE service_tokens SET revoked = true WHERE id = '` + token.String() + `'`,
		`UPDATE sites SET display_name = 'Acme 2' WHERE id = '` + site.String() + `'`,
	} {
		if _, err := pool.Exec(ctx, change); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-got:
			if id != site.String() {
				t.Errorf("%s: notified %s, want %s", change, id, site)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no notification", change)
		}
	}

	// Kill the listening connection: the listener must report itself
	// unhealthy, reset caches, and come back.
	for len(resets) > 0 {
		<-resets
	}
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resets:
	case <-time.After(20 * time.Second):
		t.Fatal("no reset after the connection was lost")
	}
	waitFor(t, "the listener to reconnect", l.Healthy)
	if _, err := pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, site); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != site.String() {
			t.Errorf("after reconnect: notified %s", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no notification after reconnect")
	}
}

// TestOtherMessagesGoToTheirHandlers: payloads other than "site:" reach
// the handler registered for their prefix, with the prefix cut off, and
// no other subscriber.
func TestOtherMessagesGoToTheirHandlers(t *testing.T) {
	url, pool := newDatabase(t)
	ctx := t.Context()
	l := NewListener(url, nil)
	limits := make(chan string, 16)
	sites := make(chan string, 16)
	l.OnMessage("limits:", func(rest string) { limits <- rest })
	l.OnSite(func(id string) { sites <- id })
	go l.Run(ctx)
	waitFor(t, "the listener", l.Healthy)
	for _, payload := range []string{"other:ignored", "no prefix", "limits:site-1:user:a@example.com"} {
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, payload); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case got := <-limits:
		if got != "site-1:user:a@example.com" {
			t.Errorf("handler got %q", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the limits: message did not arrive")
	}
	select {
	case got := <-limits:
		t.Errorf("handler got a second message %q", got)
	case got := <-sites:
		t.Errorf("a site subscriber got %q", got)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestASilentConnectionIsNoticed: the path to Postgres stops carrying
// bytes without closing (a NAT or load balancer that forgot an idle flow,
// a network partition). No error ever reaches the listener, and a change
// made meanwhile never arrives, so the listener must notice the silence
// itself: report unhealthy and reset the caches, then listen again on a
// new connection and hear the next change.
func TestASilentConnectionIsNoticed(t *testing.T) {
	dbURL, pool := newDatabase(t)
	ctx := t.Context()
	silencer := pgtest.NewSilencer(t, dbURL)

	l, got, resets := listening(t, silencer.URL)
	for len(resets) > 0 {
		<-resets
	}

	if n := silencer.SilenceListening(); n != 1 {
		t.Fatalf("silenced %d listening connections, want 1", n)
	}
	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'acme', 'frappe', 'https://erp.acme.example', 'Acme')`, site); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resets:
	case id := <-got:
		t.Fatalf("a silenced connection delivered %s", id)
	case <-time.After(20 * time.Second):
		t.Fatal("the listener still trusts a connection that has been silent for 20 s")
	}

	// A new connection carries bytes again.
	waitFor(t, "the listener to listen again", l.Healthy)
	if _, err := pool.Exec(ctx, `UPDATE sites SET display_name = 'Acme 2' WHERE id = $1`, site); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != site.String() {
			t.Errorf("notified %s, want %s", id, site)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no notification on the new connection")
	}
}

// TestListenerAcceptsPoolSettingsInTheURL: the listener gets the
// deployment's DATABASE_URL, which may size the pool (pool_max_conns, as
// docs/deploy.md says); its own connection must not send that to the
// server, which refuses it, leaving every cache bypassed for good.
func TestListenerAcceptsPoolSettingsInTheURL(t *testing.T) {
	raw, pool := newDatabase(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "3")
	u.RawQuery = q.Encode()
	_, got, _ := listening(t, u.String())
	site := uuid.New()
	if _, err := pool.Exec(t.Context(), `SELECT pg_notify($1, $2)`, Channel, "site:"+site.String()); err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != site.String() {
		t.Errorf("notified of site %s, want %s", id, site)
	}
}
