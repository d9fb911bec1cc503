package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/erpgate/erpgate/migrations"
)

// Migration directions accepted by Migrate.
const (
	DirectionUp     = "up"
	DirectionDown   = "down"
	DirectionStatus = "status"
)

// Migrate runs one goose command against the database at url, holding the
// migration lock, and writes a human-readable report to out:
//
//   - "up" applies every pending migration;
//   - "down" rolls back the most recent one;
//   - "status" lists each migration and whether it is applied.
func Migrate(ctx context.Context, url, direction string, out io.Writer) error {
	switch direction {
	case DirectionUp, DirectionDown, DirectionStatus:
	default:
		return fmt.Errorf("database: unknown migrate direction %q (want %s, %s or %s)",
			direction, DirectionUp, DirectionDown, DirectionStatus)
	}
	db, err := openSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	provider, err := newProvider(db)
	if err != nil {
		return err
	}
	return withMigrationLock(ctx, db, func() error {
		switch direction {
		case DirectionUp:
			return migrateUp(ctx, provider, out)
		case DirectionDown:
			return migrateDown(ctx, provider, out)
		default:
			return printStatus(ctx, provider, out)
		}
	})
}

// MigrateUp applies every pending migration to the database at url. It is
// safe to call from several replicas at once.
func MigrateUp(ctx context.Context, url string) error {
	return Migrate(ctx, url, DirectionUp, io.Discard)
}

// openSQL opens a database/sql handle through pgx's stdlib driver, which is
// what goose needs. Migrations get no statement timeout from us: a long index
// build must not be cut off half-way; ctx bounds the whole run. The URL is
// the pool's (Open), so it is parsed as one: its pool_* settings are not
// sent to the server, which would refuse them.
func openSQL(url string) (*sql.DB, error) {
	poolCfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database: parse connection URL: %w", err)
	}
	cfg := poolCfg.ConnConfig
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = ApplicationName
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	return stdlib.OpenDB(*cfg), nil
}

// newProvider builds a goose provider over the embedded migrations. It
// ignores goose's global registry of Go migrations: erpgate's are SQL only.
func newProvider(db *sql.DB) (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("database: load migrations: %w", err)
	}
	return p, nil
}

func migrateUp(ctx context.Context, p *goose.Provider, out io.Writer) error {
	results, err := p.Up(ctx)
	for _, r := range results {
		fmt.Fprintln(out, r)
	}
	if err != nil {
		return fmt.Errorf("database: migrate up: %w", Classify(err))
	}
	version, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("database: read schema version: %w", Classify(err))
	}
	if len(results) == 0 {
		fmt.Fprintf(out, "no pending migrations; schema at version %d\n", version)
	} else {
		fmt.Fprintf(out, "applied %d migration(s); schema at version %d\n", len(results), version)
	}
	return nil
}

func migrateDown(ctx context.Context, p *goose.Provider, out io.Writer) error {
	result, err := p.Down(ctx)
	if errors.Is(err, goose.ErrNoNextVersion) {
		fmt.Fprintln(out, "no applied migration to roll back")
		return nil
	}
	if result != nil {
		fmt.Fprintln(out, result)
	}
	if err != nil {
		return fmt.Errorf("database: migrate down: %w", Classify(err))
	}
	version, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("database: read schema version: %w", Classify(err))
	}
	fmt.Fprintf(out, "schema at version %d\n", version)
	return nil
}
