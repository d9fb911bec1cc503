package database

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"

	"github.com/erpgate/erpgate/migrations"
)

// Errors CheckReady wraps when the schema does not match this binary.
var (
	// ErrSchemaBehind: migrations embedded in this binary are not applied yet.
	ErrSchemaBehind = errors.New("database schema is behind this binary")
	// ErrSchemaAhead: the database was migrated by a newer binary.
	ErrSchemaAhead = errors.New("database schema is ahead of this binary")
)

// versionTable is goose's default bookkeeping table.
const versionTable = "goose_db_version"

// LatestVersion returns the highest migration version embedded in the binary.
func LatestVersion() (int64, error) { return latestVersion() }

var latestVersion = sync.OnceValues(func() (int64, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("database: list embedded migrations: %w", err)
	}
	var latest int64
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		v, err := goose.NumericComponent(e.Name())
		if err != nil {
			return 0, fmt.Errorf("database: migration file %s: %w", e.Name(), err)
		}
		latest = max(latest, v)
	}
	if latest == 0 {
		return 0, errors.New("database: no migrations embedded")
	}
	return latest, nil
})

// CheckReady returns nil when the database answers and its latest applied
// migration is the latest one embedded in this binary. Otherwise the error
// says which: it wraps ErrUnavailable, ErrSchemaBehind or ErrSchemaAhead.
// It only reads; it never creates goose's table.
func CheckReady(ctx context.Context, pool *pgxpool.Pool) error {
	want, err := LatestVersion()
	if err != nil {
		return err
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", versionTable).Scan(&exists); err != nil {
		return fmt.Errorf("database: check readiness: %w", Classify(err))
	}
	if !exists {
		return fmt.Errorf("database: no migrations applied, want version %d: %w", want, ErrSchemaBehind)
	}
	var have int64
	if err := pool.QueryRow(ctx, "SELECT coalesce(max(version_id), 0) FROM "+versionTable).Scan(&have); err != nil {
		return fmt.Errorf("database: read schema version: %w", Classify(err))
	}
	switch {
	case have < want:
		return fmt.Errorf("database: schema at version %d, want %d (run `erpgate migrate up`): %w", have, want, ErrSchemaBehind)
	case have > want:
		return fmt.Errorf("database: schema at version %d, newer than this binary's %d: %w", have, want, ErrSchemaAhead)
	}
	return nil
}
