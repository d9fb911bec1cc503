package main

import (
	"context"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	authstorage "github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/erptokens"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
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

// keySpec is a new key named id, as ERPGATE_ENCRYPTION_KEYS lists it.
func keySpec(t *testing.T, id string) string {
	t.Helper()
	spec, err := secrets.GenerateKeySpec(id)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// twoKeys is the keys a rotation goes from, k1, and to, k2.
func twoKeys(t *testing.T) (k1, k2 string) {
	t.Helper()
	return keySpec(t, "k1"), keySpec(t, "k2")
}

// keyringOf is the keyring of spec, a list as ERPGATE_ENCRYPTION_KEYS
// takes it.
func keyringOf(t *testing.T, spec string) *secrets.Keyring {
	t.Helper()
	k, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// acmeOnNewDatabase is a new database (its URL and a pool on it, closed
// when the test ends) holding one site, acme, and the database's clock.
func acmeOnNewDatabase(t *testing.T) (db string, pool *pgxpool.Pool, site uuid.UUID, dbNow time.Time) {
	t.Helper()
	ctx := context.Background()
	db = pgtest.NewDatabase(t)
	pool, err := database.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	site = uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'acme', 'frappe', 'https://acme.example', 'Acme')`, site); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	return db, pool, site, dbNow
}

// proofAndRegistrationUnder puts a proof of an administrator and a
// registration in progress in the database, sealed with keys and the
// binding their packages give them, for a rotation to re-seal.
func proofAndRegistrationUnder(t *testing.T, pool *pgxpool.Pool, keys *secrets.Keyring) {
	t.Helper()
	ctx := context.Background()
	stateHash := []byte{0x01}
	kid, sealedVerifier, err := keys.Seal([]byte("proof-verifier-0123456789"), secrets.AdditionalData("erpadmin_proof", hex.EncodeToString(stateHash), "verifier"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO erpadmin_proofs (state_hash, browser_hash, purpose, ref, key_id, verifier_ciphertext, expires_at)
		VALUES ($1, '\x02', 'register', 'ref', $2, $3, now() + interval '10 minutes')`, stateHash, kid, sealedVerifier); err != nil {
		t.Fatal(err)
	}
	registration := uuid.New()
	kid, sealedSecret, err := keys.Seal([]byte("registrant-client-secret-0123456789"), secrets.AdditionalData("pending_registration", registration.String(), "client_secret"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO pending_registrations (id, browser_hash, stage, kind, display_name, base_url, settings, key_id, secret_ciphertext, expires_at)
		VALUES ($1, '\x02', 'client', 'frappe', 'Acme', 'https://acme.example', '{}', $2, $3, now() + interval '30 minutes')`, registration, kid, sealedSecret); err != nil {
		t.Fatal(err)
	}
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

	k2 := keySpec(t, "k2")
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

// TestKeysRotateLeavesNothingUnderTheOldKey puts a row under k1 in every
// table that names the key of what it seals (what is in flight too: an
// owner's and an open registration's ERP tokens, an owner's change waiting
// for its proof, a sign-in from an MCP client, a proof of an administrator
// and a registration under way), rotates to k2 with the CLI, and finds no
// row left under k1 and the values readable with only k2 configured: the
// operator can drop k1 right after the rotation.
func TestKeysRotateLeavesNothingUnderTheOldKey(t *testing.T) {
	ctx := context.Background()
	db, pool, site, dbNow := acmeOnNewDatabase(t)
	k1, k2 := twoKeys(t)
	kept := map[string]string{"owner-cookie": "owner-erp-token-0123456789", "registration\x00" + uuid.NewString(): "registrant-erp-token-9876543210"}
	for cookie, token := range kept {
		if err := pagesession.NewTokens(pool, keyringOf(t, k1)).Keep(ctx, site, cookie, "it.admin@demo.example", secrets.Secret(token), dbNow.Add(30*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	const newSecret = "new-oauth-client-secret-0123456789"
	change, err := sites.NewStore(pool, keyringOf(t, k1)).PutOwnerChange(ctx, sites.OwnerChange{SiteID: site, ERPUser: "it.admin@demo.example", ClientSecret: newSecret}, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	// What was rotated before: a credential, a person's ERP token, a
	// service connection's ERP token and the token-signing key.
	if _, err := sites.NewStore(pool, keyringOf(t, k1)).PutConnection(ctx, site, sites.ConnectionAPIToken, "bot@example.com",
		map[string]secrets.Secret{"api_key": "key", "api_secret": "secret"}); err != nil {
		t.Fatal(err)
	}
	auth := authstorage.New(pool, keyringOf(t, k1), authstorage.Options{})
	if err := auth.PutUpstreamToken(ctx, authstorage.UpstreamToken{SiteID: site, ERPUser: "u@x", Access: "acc", Refresh: "ref", ExpiresAt: dbNow.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.TokenHMACKey(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := erptokens.New(pool, keyringOf(t, k1), erptokens.Options{}).Token(ctx, site, "api.service", func(context.Context, connector.StoredToken) (connector.UpstreamToken, error) {
		return connector.UpstreamToken{AccessToken: "service-access", ExpiresIn: time.Hour}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// A person's sign-in from an MCP client, at the ERP.
	if err := authstorage.New(pool, keyringOf(t, k1), authstorage.Options{}).CreateFlow(ctx, authstorage.NewFlow{ID: "flow", Browser: "browser",
		Stage: authstorage.StageERP, ClientID: "c", Resource: "r", SiteID: site, Verifier: "pkce-verifier-0123456789", TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	// A proof of an administrator and a registration in progress under k1,
	// sealed with the binding their packages give them.
	proofAndRegistrationUnder(t, pool, keyringOf(t, k1))

	// Every column that names the key a row is sealed under, so that a
	// table added later is here too, with a row under k1.
	rows, err := pool.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_name IN ('key_id', 'secret_key_id') ORDER BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var c [2]string
		return c, r.Scan(&c[0], &c[1])
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 {
		t.Fatal("no column names a key")
	}
	underK1 := func(c [2]string) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{c[0]}.Sanitize()+` WHERE `+pgx.Identifier{c[1]}.Sanitize()+` = 'k1'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range sealed {
		if underK1(c) == 0 {
			t.Errorf("%s has no row under k1 here: this test does not show that the rotation re-seals it", c[0])
		}
	}

	t.Setenv("DATABASE_URL", db)
	t.Setenv("ERPGATE_ENCRYPTION_KEYS", k2+","+k1)
	out, err := captureStdout(t, func() error { return run(ctx, []string{"keys", "rotate"}) })
	if err != nil {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	for _, c := range sealed {
		if n := underK1(c); n != 0 {
			t.Errorf("%s: %d rows left under k1", c[0], n)
		}
	}
	// Two credential fields, a person's and a service connection's ERP
	// tokens, the signing key, two owner tokens, a change, a sign-in, a
	// proof and a registration.
	if !strings.Contains(out, `re-encrypted 11 secrets under key "k2"`) {
		t.Errorf("rotate printed %q, want 11 re-sealed", out)
	}
	if f, err := authstorage.New(pool, keyringOf(t, k2), authstorage.Options{}).PeekFlow(ctx, "flow", "browser", authstorage.StageERP); err != nil || f.Verifier.Reveal() != "pkce-verifier-0123456789" {
		t.Errorf("with only k2: the sign-in: %v; want its verifier kept under k1", err)
	}
	if c, err := sites.NewStore(pool, keyringOf(t, k2)).GetOwnerChange(ctx, site, change); err != nil || c.ClientSecret.Reveal() != newSecret {
		t.Errorf("with only k2: the owner change: %v; want its secret kept under k1", err)
	}
	onlyK2 := pagesession.NewTokens(pool, keyringOf(t, k2))
	for cookie, token := range kept {
		if user, got, err := onlyK2.Get(ctx, site, cookie); err != nil || user != "it.admin@demo.example" || got.Reveal() != token {
			t.Errorf("with only k2: Get = %q, %v; want the token kept under k1", user, err)
		}
	}
}
