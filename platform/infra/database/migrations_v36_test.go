package database_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

func init() {
	migrationFixtures = append(migrationFixtures, migrationFixture{version: 35, seed: seedServiceTokenBeforeV36, check: checkServiceTokenExpiryV36})
}

const v36TokenID = "0193a000-0000-7000-8000-000000000036"

// seedServiceTokenBeforeV36 issues, before 00036, a token of the v1
// fixture site.
func seedServiceTokenBeforeV36(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `
INSERT INTO service_tokens (id, site_id, name, token_hash, prefix)
     VALUES ($1, $2, 'bot before expiry', sha256('fixture-token-v36'), 'egs_v36x')`,
		pgx.QueryExecModeSimpleProtocol, v36TokenID, v1SiteID)
	return err
}

// checkServiceTokenExpiryV36: the token is there at every step, and from
// 00036 on it has no expiry: a token issued before expiries existed goes
// on working as it did.
func checkServiceTokenExpiryV36(ctx context.Context, conn *pgx.Conn) error {
	var applied bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id = 36)`).Scan(&applied); err != nil {
		return err
	}
	var name string
	if err := conn.QueryRow(ctx, `SELECT name FROM service_tokens WHERE id = $1`, pgx.QueryExecModeSimpleProtocol, v36TokenID).Scan(&name); err != nil {
		return fmt.Errorf("token issued before 00036: %w", err)
	}
	if name != "bot before expiry" {
		return fmt.Errorf("token name = %q", name)
	}
	if !applied {
		return nil
	}
	var never bool
	if err := conn.QueryRow(ctx, `SELECT expires_at IS NULL FROM service_tokens WHERE id = $1`, pgx.QueryExecModeSimpleProtocol, v36TokenID).Scan(&never); err != nil {
		return err
	}
	if !never {
		return fmt.Errorf("a token issued before 00036 got an expiry")
	}
	return nil
}
