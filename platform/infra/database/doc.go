// Package database owns erpgate's access to PostgreSQL, its only state
// store: opening the connection pool (Open), applying the embedded goose
// migrations (Migrate, MigrateUp), the readiness check behind /readyz
// (CheckReady), and the one place where pgx and pgconn errors are turned into
// meanings callers can act on (Classify, ErrUnavailable, IsUniqueViolation,
// IsForeignKeyViolation, IsCheckViolation, IsNoRows).
//
// Callers above this package never inspect *pgconn.PgError themselves.
package database
