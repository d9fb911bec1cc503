package pagesession

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// An owner's ERP token is kept sealed for their session on their site: read
// back only for that session and site, never stored in the clear, gone at
// Drop and, an hour past its session's expiry, at Purge.
func TestOwnerTokensAreTheSessionsAndSitesOnly(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	site, other := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{site, other} {
		if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, 'Site')`,
			id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example"); err != nil {
			t.Fatal(err)
		}
	}
	a, b := NewTokens(pool, keys), NewTokens(pool, keys)
	var dbNow time.Time
	if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
		t.Fatal(err)
	}
	const token = "frappe-access-token-0123456789"
	if err := a.Keep(ctx, site, "cookie-1", "it.admin@demo.example", secrets.Secret(token), dbNow.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if user, got, err := b.Get(ctx, site, "cookie-1"); err != nil || user != "it.admin@demo.example" || got.Reveal() != token {
		t.Errorf("Get = %q, %q, %v", user, got.Reveal(), err)
	}
	for name, c := range map[string]struct {
		site   uuid.UUID
		cookie string
	}{"another session": {site, "cookie-2"}, "another site": {other, "cookie-1"}} {
		if _, _, err := b.Get(ctx, c.site, c.cookie); !errors.Is(err, ErrNoToken) {
			t.Errorf("%s: %v, want ErrNoToken", name, err)
		}
	}
	var inTheClear int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM owner_session_tokens WHERE position($1::bytea in token) > 0 OR erp_user = $2`,
		[]byte(token), token).Scan(&inTheClear); err != nil || inTheClear != 0 {
		t.Errorf("%d rows hold the token in the clear (%v)", inTheClear, err)
	}
	// A row moved to another site does not open there.
	if _, err := pool.Exec(ctx, `UPDATE owner_session_tokens SET site_id = $1`, other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, other, "cookie-1"); !errors.Is(err, ErrNoToken) {
		t.Errorf("a row moved to another site: %v, want ErrNoToken", err)
	}
	if err := a.Keep(ctx, site, "cookie-1", "it.admin@demo.example", secrets.Secret(token), dbNow.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.Drop(ctx, other, "cookie-1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, site, "cookie-1"); err != nil {
		t.Errorf("Drop on another site dropped this one's: %v", err)
	}
	if err := a.Drop(ctx, site, "cookie-1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, site, "cookie-1"); !errors.Is(err, ErrNoToken) {
		t.Errorf("after Drop: %v, want ErrNoToken", err)
	}
	for cookie, expires := range map[string]time.Time{"old": dbNow.Add(-61 * time.Minute), "recent": dbNow.Add(-59 * time.Minute), "open": dbNow.Add(time.Minute)} {
		if err := a.Keep(ctx, site, cookie, "u", secrets.Secret(token), expires); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.Purge(ctx); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1 row", n, err)
	}
	if _, _, err := b.Get(ctx, site, "recent"); err != nil {
		t.Errorf("Purge took a token within the hour's margin: %v", err)
	}
}

// DropPerson drops the tokens of every session of one ERP user (case
// aside) on one site: not another user's there, nor the user's on another
// site.
func TestDropPersonDropsOnlyThatPersonsTokensOnThatSite(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	site, other := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{site, other} {
		if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, $2, 'frappe', $3, 'Site')`,
			id, "s"+id.String()[:8], "https://"+id.String()[:8]+".example"); err != nil {
			t.Fatal(err)
		}
	}
	tokens := NewTokens(pool, keys)
	expires := time.Now().Add(30 * time.Minute)
	kept := []struct {
		site         uuid.UUID
		cookie, user string
		dropped      bool
	}{
		{site, "laptop", "ana@example.com", true},
		{site, "shared", "Ana@Example.com", true},
		{site, "bobs", "bob@example.com", false},
		{other, "laptop-other", "ana@example.com", false},
	}
	for _, k := range kept {
		if err := tokens.Keep(ctx, k.site, k.cookie, k.user, secrets.Secret("token-"+k.cookie), expires); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tokens.DropPerson(ctx, site, "ana@example.com"); err != nil || n != 2 {
		t.Errorf("DropPerson = %d, %v; want 2", n, err)
	}
	for _, k := range kept {
		_, _, err := tokens.Get(ctx, k.site, k.cookie)
		if gone := errors.Is(err, ErrNoToken); gone != k.dropped || (!gone && err != nil) {
			t.Errorf("%s's token of session %s: %v, dropped %v", k.user, k.cookie, err, k.dropped)
		}
	}
}

// DropPerson drops the tokens of the sessions that signing out everywhere
// ends (pagekit.UserSession names a person by strings.ToLower of their
// ERP user), whatever the database's collation lowers: the Kelvin sign
// (U+212A) lower-cases to a "k", and "É" to "é", in Go, but not in
// PostgreSQL's lower() under the C locale. A token left behind would be
// one of a session already ended, kept until the sweep.
func TestDropPersonLowersAsSigningOutEverywhereDoes(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'kelvin', 'frappe', 'https://kelvin.example', 'Site')`, site); err != nil {
		t.Fatal(err)
	}
	tokens := NewTokens(pool, keys)
	expires := time.Now().Add(30 * time.Minute)
	kept := []struct {
		cookie, user string
		dropped      bool
	}{
		{"ascii", "kelvin@example.com", true},
		{"kelvin sign", "\u212Aelvin@example.com", true},
		{"upper", "KELVIN@EXAMPLE.COM", true},
		{"another", "kelvina@example.com", false},
		{"accented upper", "ÉMILE@example.com", true},
		{"accented lower", "émile@example.com", true},
		{"plain", "emile@example.com", false},
	}
	for _, k := range kept {
		if err := tokens.Keep(ctx, site, k.cookie, k.user, secrets.Secret("token-"+k.cookie), expires); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := tokens.DropPerson(ctx, site, "Kelvin@example.com"); err != nil || n != 3 {
		t.Errorf("DropPerson of Kelvin = %d, %v; want 3", n, err)
	}
	if n, err := tokens.DropPerson(ctx, site, "Émile@example.com"); err != nil || n != 2 {
		t.Errorf("DropPerson of Émile = %d, %v; want 2", n, err)
	}
	for _, k := range kept {
		_, _, err := tokens.Get(ctx, site, k.cookie)
		if gone := errors.Is(err, ErrNoToken); gone != k.dropped || (!gone && err != nil) {
			t.Errorf("%s's token (%s): %v, dropped %v", k.user, k.cookie, err, k.dropped)
		}
	}
}

// KeepTokens keeps the refresh token and the access token's expiry with
// it, sealed as one and never in the clear; a row kept before (the access
// token alone) is still read, and re-sealed as it was by RotateKeys.
func TestKeptTokensHoldTheRefreshTokenAndOldRowsStillRead(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t)
	spec := keySpecs(t, "old", "new")
	site := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'pair', 'acumatica', 'https://pair.example', 'Site')`, site); err != nil {
		t.Fatal(err)
	}
	tokens := NewTokens(pool, keyringOf(t, spec["new"], spec["old"]))
	expires := time.Now().Add(30 * time.Minute)
	want := connector.StoredToken{Access: "access-0123456789", Refresh: "refresh-0123456789", ExpiresAt: time.Unix(1_900_000_000, 0)}
	if err := tokens.KeepTokens(ctx, site, "pair", "admin@Company", want, expires); err != nil {
		t.Fatal(err)
	}
	if user, got, err := tokens.Kept(ctx, site, "pair"); err != nil || user != "admin@Company" || got.Access != want.Access ||
		got.Refresh != want.Refresh || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("Kept = %q, %q, %q, %v, %v", user, got.Access.Reveal(), got.Refresh.Reveal(), got.ExpiresAt, err)
	}
	var inTheClear int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM owner_session_tokens WHERE position($1::bytea in token) > 0 OR position($2::bytea in token) > 0`,
		[]byte(want.Access), []byte(want.Refresh)).Scan(&inTheClear); err != nil || inTheClear != 0 {
		t.Errorf("%d rows hold a token in the clear (%v)", inTheClear, err)
	}

	// A row of an earlier erpgate: the access token alone, under the old key.
	hash := sessionHash("earlier")
	kid, sealed, err := keyringOf(t, spec["old"]).Seal([]byte("earlier-access-0123"), accessOnlyAD(site, hash))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO owner_session_tokens (session_hash, site_id, erp_user, key_id, token, expires_at) VALUES ($1, $2, 'u', $3, $4, $5)`,
		hash, site, kid, sealed, expires); err != nil {
		t.Fatal(err)
	}
	check := func(when string, tokens *Tokens) {
		t.Helper()
		if _, got, err := tokens.Kept(ctx, site, "earlier"); err != nil || got.Access != "earlier-access-0123" || got.Refresh.IsSet() || !got.ExpiresAt.IsZero() {
			t.Errorf("%s: the earlier row reads %q, %q, %v, %v", when, got.Access.Reveal(), got.Refresh.Reveal(), got.ExpiresAt, err)
		}
	}
	check("before rotating", tokens)
	if resealed, unreadable, err := tokens.RotateKeys(ctx); err != nil || resealed != 1 || unreadable != 0 {
		t.Fatalf("RotateKeys = %d, %d, %v; want the earlier row re-sealed", resealed, unreadable, err)
	}
	check("after rotating, with the new key alone", NewTokens(pool, keyringOf(t, spec["new"])))
}
