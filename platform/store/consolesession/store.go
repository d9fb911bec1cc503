// Package consolesession keeps the operator console's sessions in
// Postgres: a session is opened at sign-in, checked on every console
// request and ended at sign-out, so that an ended session's cookie is
// refused by every replica, including a copy an attacker took.
package consolesession

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Session is an open console session.
type Session struct {
	// ID is the secret the signed cookie carries.
	ID string
	// Ref names the session in audit events and logs: a prefix of the
	// id's hash, never the id.
	Ref     string
	Expires time.Time
}

// Store opens, checks and ends sessions.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// ErrEnded means the session does not exist, was ended or has expired.
var ErrEnded = errors.New("consolesession: the session is not open")

func hashID(id string) ([]byte, string) {
	sum := sha256.Sum256([]byte(id))
	return sum[:], hex.EncodeToString(sum[:6])
}

// Open starts a session of lifetime for a sign-in from source.
func (s *Store) Open(ctx context.Context, source string, lifetime time.Duration) (Session, error) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24)
	id := base64.RawURLEncoding.EncodeToString(raw)
	hash, ref := hashID(id)
	var expires time.Time
	err := s.pool.QueryRow(ctx, `
		INSERT INTO console_sessions (id_hash, ref, source, expires_at)
		VALUES ($1, $2, $3, now() + make_interval(secs => $4))
		RETURNING expires_at`, hash, ref, source, lifetime.Seconds()).Scan(&expires)
	if err != nil {
		return Session{}, database.Classify(err)
	}
	return Session{ID: id, Ref: ref, Expires: expires}, nil
}

// Check returns the session of id if it is open, or ErrEnded.
func (s *Store) Check(ctx context.Context, id string) (Session, error) {
	hash, _ := hashID(id)
	var sess Session
	err := s.pool.QueryRow(ctx, `
		SELECT ref, expires_at FROM console_sessions
		 WHERE id_hash = $1 AND ended_at IS NULL AND expires_at > now()`, hash).Scan(&sess.Ref, &sess.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrEnded
	}
	if err != nil {
		return Session{}, database.Classify(err)
	}
	sess.ID = id
	return sess, nil
}

// End ends the session of id; ending an ended session does nothing.
func (s *Store) End(ctx context.Context, id string) error {
	hash, _ := hashID(id)
	_, err := s.pool.Exec(ctx, `UPDATE console_sessions SET ended_at = now() WHERE id_hash = $1 AND ended_at IS NULL`, hash)
	return database.Classify(err)
}

// Purge deletes the sessions that expired more than a day ago.
func (s *Store) Purge(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM console_sessions WHERE expires_at < now() - interval '1 day'`)
	return database.Classify(err)
}
