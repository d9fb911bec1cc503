package database

import (
	"database/sql"

	"github.com/pressly/goose/v3"
)

// Test-only access to internals for the external test package, which cannot
// be package database because it imports pgtest (which imports database).

// OpenSQLForTest exposes openSQL.
func OpenSQLForTest(url string) (*sql.DB, error) { return openSQL(url) }

// NewProviderForTest exposes the goose provider over the embedded migrations.
func NewProviderForTest(db *sql.DB) (*goose.Provider, error) { return newProvider(db) }

// MigrationLockKeyForTest is the advisory lock key Migrate holds.
const MigrationLockKeyForTest = migrationLockKey
