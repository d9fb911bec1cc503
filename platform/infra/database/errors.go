package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// ErrUnavailable marks a failure to reach the database: the server is down,
// refuses connections, is restarting, or the connection broke mid-query.
// Handlers map it to a generic "service unavailable" answer and never show
// the underlying message (it names hosts and users).
var ErrUnavailable = errors.New("database unavailable")

// SQLSTATE codes this package interprets; see PostgreSQL's Appendix A.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeCheckViolation      = "23514"
	codeTooManyConnections  = "53300"
	codeAdminShutdown       = "57P01"
	codeCrashShutdown       = "57P02"
	codeCannotConnectNow    = "57P03"
	classConnection         = "08"
)

// unavailableError keeps the original error in the chain next to
// ErrUnavailable, so errors.Is finds both and errors.As finds the pgx type.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return "database unavailable: " + e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// Classify converts a pgx, pgconn or database/sql error once, at the
// database boundary: connection failures come back wrapping ErrUnavailable;
// every other error, and nil, is returned unchanged. Classifying twice is
// harmless.
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if isConnectionFailure(err) {
		return &unavailableError{err: err}
	}
	return err
}

// IsUnavailable reports whether err is a connection failure, classified or
// not.
func IsUnavailable(err error) bool {
	return errors.Is(err, ErrUnavailable) || isConnectionFailure(err)
}

func isConnectionFailure(err error) bool {
	if err == nil {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		// Includes connect timeouts, which surface as deadline errors.
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeTooManyConnections, codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow:
			return true
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == classConnection
	}
	// The caller's own deadline or cancellation is not the database's fault.
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone)
}

// IsUniqueViolation reports whether err is a unique-constraint violation and
// names the violated constraint (or unique index).
func IsUniqueViolation(err error) (constraint string, ok bool) {
	return violation(err, codeUniqueViolation)
}

// IsForeignKeyViolation reports whether err is a foreign-key violation and
// names the violated constraint.
func IsForeignKeyViolation(err error) (constraint string, ok bool) {
	return violation(err, codeForeignKeyViolation)
}

// IsCheckViolation reports whether err is a CHECK-constraint violation and
// names the violated constraint.
func IsCheckViolation(err error) (constraint string, ok bool) {
	return violation(err, codeCheckViolation)
}

// IsNoRows reports whether a single-row query found nothing.
func IsNoRows(err error) bool {
	return errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows)
}

func violation(err error, code string) (string, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == code {
		return pgErr.ConstraintName, true
	}
	return "", false
}
