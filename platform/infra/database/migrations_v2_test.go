package database_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Fixture of 00002_oauth: one row in each OAuth table, on the v1 site.
func seedV2(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, seedV2SQL, pgx.QueryExecModeSimpleProtocol, v1SiteID)
	return err
}

const seedV2SQL = `
INSERT INTO oauth_secrets (name, key_id, ciphertext) VALUES ('token_hmac', 'k1', '\x01');
INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
     VALUES ('egc_fixture', 'Fixture', '{http://127.0.0.1/cb}', '{authorization_code,refresh_token}', '{code}', 'erp:read', 'none');
INSERT INTO oauth_tokens (kind, signature_hash, request_id, client_id, site_id, subject, requested_at, session)
     VALUES ('refresh', sha256('sig'), 'req-fixture', 'egc_fixture', $1, 'user@acme.test', '2026-01-02T03:04:05Z', '{"subject":"user@acme.test"}');
INSERT INTO oauth_consents (site_id, erp_user, client_id) VALUES ($1, 'user@acme.test', 'egc_fixture');
INSERT INTO upstream_tokens (site_id, erp_user, key_id, access_ciphertext, expires_at)
     VALUES ($1, 'user@acme.test', 'k1', '\x02', '2026-01-02T04:04:05Z');
INSERT INTO auth_events (site_id, event, erp_user, client_id, reason)
     VALUES ($1, 'login_denied', 'user@acme.test', 'egc_fixture', 'access_check_misconfigured');`

func checkV2(ctx context.Context, conn *pgx.Conn) error {
	var got []string
	for _, q := range []string{
		`SELECT name || '|' || key_id FROM oauth_secrets`,
		`SELECT id || '|' || token_endpoint_auth_method || '|' || array_to_string(redirect_uris, ',') FROM oauth_clients`,
		`SELECT kind || '|' || request_id || '|' || subject || '|' || (signature_hash = sha256('sig')) FROM oauth_tokens`,
		`SELECT erp_user || '|' || client_id FROM oauth_consents WHERE site_id = '` + v1SiteID + `'`,
		`SELECT erp_user || '|' || key_id || '|' || encode(access_ciphertext, 'hex') FROM upstream_tokens`,
		`SELECT event || '|' || reason FROM auth_events`,
	} {
		var line string
		if err := conn.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&line); err != nil {
			if database.IsNoRows(err) {
				return fmt.Errorf("row missing: %s", q)
			}
			return err
		}
		got = append(got, line)
	}
	want := []string{
		"token_hmac|k1",
		"egc_fixture|none|http://127.0.0.1/cb",
		"refresh|req-fixture|user@acme.test|true",
		"user@acme.test|egc_fixture",
		"user@acme.test|k1|02",
		"login_denied|access_check_misconfigured",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("fixture rows changed:\n got %q\nwant %q", got, want)
	}
	return nil
}
