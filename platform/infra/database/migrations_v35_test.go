package database_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

func init() {
	migrationFixtures = append(migrationFixtures, migrationFixture{version: 34, seed: seedClientNamesBeforeV35, check: checkClientNamesV35})
}

// v35RawName is a client name as /register stored it before names were
// kept plain: a right-to-left override and its end, a line break and a tab
// around the words.
const v35RawName = "\tEvil \u202ezyx.edualc\u202c\nApp "

// seedClientNamesBeforeV35 stores, before 00035, a client whose name holds
// controls and one whose name is already plain.
func seedClientNamesBeforeV35(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `
INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method) VALUES
 ('egc_v35_raw', $1, '{http://127.0.0.1/cb}', '{authorization_code,refresh_token}', '{code}', 'erp:read', 'none'),
 ('egc_v35_plain', 'Plain Client', '{http://127.0.0.1/cb}', '{authorization_code,refresh_token}', '{code}', 'erp:read', 'none')`,
		pgx.QueryExecModeSimpleProtocol, v35RawName)
	return err
}

// checkClientNamesV35: the clients are there at every step, and from 00035
// on their names hold no control character and no direction control (the
// approval and owner pages show the stored name). Its down keeps the names
// plain: the controls are not worth restoring.
func checkClientNamesV35(ctx context.Context, conn *pgx.Conn) error {
	var applied bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id = 35)`).Scan(&applied); err != nil {
		return err
	}
	var raw, plain string
	if err := conn.QueryRow(ctx, `SELECT (SELECT name FROM oauth_clients WHERE id = 'egc_v35_raw'), (SELECT name FROM oauth_clients WHERE id = 'egc_v35_plain')`).Scan(&raw, &plain); err != nil {
		return err
	}
	const cleaned = "Evil zyx.edualcApp"
	if plain != "Plain Client" {
		return fmt.Errorf("a plain name became %q", plain)
	}
	if raw != cleaned && (applied || raw != v35RawName) {
		return fmt.Errorf("client name = %q (00035 applied: %v), want %q", raw, applied, cleaned)
	}
	return nil
}
