package main

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	authstorage "github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestUserERPTokenUnderARetiredKey: a person's ERP token sealed under a key
// this replica no longer has (written by a replica still on the old key
// list while the new one rolled out, then the old key removed) cannot be
// opened. The person must be told to sign in again (AUTH_EXPIRED), as when
// the ERP ends their refresh token, not be failed as INTERNAL on every
// call with no way forward.
func TestUserERPTokenUnderARetiredKey(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	user := userWithRole(t, sim, "all-companies")
	alex := connectOAuth(t, site.MCPURL, frappeLogin(user))
	mustSucceed(t, callTool(t, alex.cs, "get_current_user", nil), "get_current_user")

	ctx := context.Background()
	pool, err := pgxpool.New(ctx, gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	current, err := secrets.ParseKeyring(gw.Keys)
	if err != nil {
		t.Fatal(err)
	}
	retiredSpec, err := secrets.GenerateKeySpec("retired")
	if err != nil {
		t.Fatal(err)
	}
	retired, err := secrets.ParseKeyring(retiredSpec)
	if err != nil {
		t.Fatal(err)
	}
	siteID := uuid.MustParse(site.ID)
	tok, err := authstorage.New(pool, current, authstorage.Options{}).UpstreamToken(ctx, siteID, user.Email)
	if err != nil {
		t.Fatal(err)
	}
	if err := authstorage.New(pool, retired, authstorage.Options{}).PutUpstreamToken(ctx, tok); err != nil {
		t.Fatal(err)
	}

	// The row's change reaches the replica's token cache by notification.
	var res toolResult
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res = callTool(t, alex.cs, "get_current_user", nil); res.IsError || time.Now().After(deadline) {
			break
		}
	}
	if !res.IsError || res.errorCode() != "AUTH_EXPIRED" {
		t.Fatalf("a call whose ERP token is under a retired key: %s", res.Text)
	}
	// Their grants were revoked, so that the client signs them in again,
	// and the reason is recorded.
	var grants, events int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE site_id = $1 AND subject = $2`, siteID, user.Email).Scan(&grants); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM auth_events WHERE site_id = $1 AND erp_user = $2
		AND event = 'grants_revoked' AND reason = 'upstream_token_unreadable'`, siteID, user.Email).Scan(&events); err != nil {
		t.Fatal(err)
	}
	if grants != 0 || events != 1 {
		t.Fatalf("after the unreadable token: %d grants left, %d grants_revoked events; want 0 and 1", grants, events)
	}
}
