package pagesession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ErrNoToken: no ERP token is kept for this session on this site (it was
// signed out, swept, or began before tokens were kept).
var ErrNoToken = errors.New("pagesession: no ERP token kept for this session")

// Tokens keeps, in owner_session_tokens, the ERP access token an owner
// signed in with on a site's owner page, for the life of that session:
// each change the owner makes asks the ERP again with it whether they
// still administer the site. The token is sealed with AES-256-GCM under
// the keyring's primary key, bound to its site and session; every query
// takes the site's id. Nothing here logs or returns the token but Get.
type Tokens struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
}

// NewTokens returns the store on pool, sealing with keys.
func NewTokens(pool *pgxpool.Pool, keys *secrets.Keyring) *Tokens {
	return &Tokens{pool: pool, keys: keys}
}

func sessionHash(cookie string) []byte {
	sum := sha256.Sum256([]byte("erpgate owner session token\x00" + cookie))
	return sum[:]
}

func tokenAD(siteID uuid.UUID, hash []byte) []byte {
	return secrets.AdditionalData("owner_session_tokens", siteID.String(), hex.EncodeToString(hash), "access_token")
}

// Keep stores token, user's ERP access token, for the session of cookie on
// site siteID until expires (the session's own expiry).
func (t *Tokens) Keep(ctx context.Context, siteID uuid.UUID, cookie, user string, token secrets.Secret, expires time.Time) error {
	hash := sessionHash(cookie)
	kid, sealed, err := t.keys.Seal([]byte(token.Reveal()), tokenAD(siteID, hash))
	if err != nil {
		return fmt.Errorf("pagesession: seal the owner's ERP token: %w", err)
	}
	_, err = t.pool.Exec(ctx, `
		INSERT INTO owner_session_tokens (session_hash, site_id, erp_user, key_id, token, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (session_hash) DO UPDATE SET site_id = EXCLUDED.site_id, erp_user = EXCLUDED.erp_user,
			key_id = EXCLUDED.key_id, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at`,
		hash, siteID, user, kid, sealed, expires)
	return database.Classify(err)
}

// Get returns the ERP user and token kept for the session of cookie on
// site siteID, or ErrNoToken.
func (t *Tokens) Get(ctx context.Context, siteID uuid.UUID, cookie string) (string, secrets.Secret, error) {
	hash := sessionHash(cookie)
	var user, kid string
	var sealed []byte
	err := t.pool.QueryRow(ctx, `
		SELECT erp_user, key_id, token FROM owner_session_tokens
		WHERE session_hash = $1 AND site_id = $2 AND expires_at > now() - interval '1 hour'`, hash, siteID).Scan(&user, &kid, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", ErrNoToken
	}
	if err != nil {
		return "", "", database.Classify(err)
	}
	plain, err := t.keys.Open(kid, sealed, tokenAD(siteID, hash))
	if err != nil {
		// A key dropped from the ring, or a row that is not this one's:
		// as good as none.
		return "", "", fmt.Errorf("%w: it cannot be opened (key %q)", ErrNoToken, kid)
	}
	return user, secrets.Secret(plain), nil
}

// Drop deletes the token kept for the session of cookie on site siteID.
func (t *Tokens) Drop(ctx context.Context, siteID uuid.UUID, cookie string) error {
	_, err := t.pool.Exec(ctx, `DELETE FROM owner_session_tokens WHERE session_hash = $1 AND site_id = $2`, sessionHash(cookie), siteID)
	return database.Classify(err)
}

// DropPerson deletes the tokens kept for every session of user (case
// aside, as the ERPs name people) on site siteID: what signing out
// everywhere leaves. It returns how many it deleted.
//
// Case is set aside as signing out everywhere sets it aside
// (pagekit.UserSession names a person by strings.ToLower of their ERP
// user), here in Go too: PostgreSQL's lower() follows the database's
// collation (under the C locale it lowers ASCII letters only, so not "É"
// nor the Kelvin sign), and would leave the tokens of sessions already
// ended. A site keeps a token per owner session of the last hour and a
// half, so its rows are read whole.
func (t *Tokens) DropPerson(ctx context.Context, siteID uuid.UUID, user string) (int64, error) {
	rows, err := t.pool.Query(ctx, `SELECT session_hash, erp_user FROM owner_session_tokens WHERE site_id = $1`, siteID)
	if err != nil {
		return 0, database.Classify(err)
	}
	person := strings.ToLower(user)
	var theirs [][]byte
	for rows.Next() {
		var (
			hash []byte
			name string
		)
		if err := rows.Scan(&hash, &name); err != nil {
			rows.Close()
			return 0, database.Classify(err)
		}
		if strings.ToLower(name) == person {
			theirs = append(theirs, hash)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, database.Classify(err)
	}
	if len(theirs) == 0 {
		return 0, nil
	}
	tag, err := t.pool.Exec(ctx, `DELETE FROM owner_session_tokens WHERE site_id = $1 AND session_hash = ANY($2)`, siteID, theirs)
	if err != nil {
		return 0, database.Classify(err)
	}
	return tag.RowsAffected(), nil
}

// DropSession deletes the token kept for the session of cookie, whatever
// its site: a session replaced by another sign-in in its browser.
func (t *Tokens) DropSession(ctx context.Context, cookie string) error {
	_, err := t.pool.Exec(ctx, `DELETE FROM owner_session_tokens WHERE session_hash = $1`, sessionHash(cookie))
	return database.Classify(err)
}

// Purge deletes the tokens of sessions that expired over an hour ago (the
// hour allows for a replica's clock behind the database's). It returns
// how many it deleted.
func (t *Tokens) Purge(ctx context.Context) (int64, error) {
	tag, err := t.pool.Exec(ctx, `DELETE FROM owner_session_tokens WHERE expires_at < now() - interval '1 hour'`)
	if err != nil {
		return 0, database.Classify(err)
	}
	return tag.RowsAffected(), nil
}

// RotateKeys re-seals, under the keyring's primary key, every kept token
// sealed with another key, with the same binding to its site and session,
// and returns how many it re-sealed and how many no configured key opens.
// Each row is re-sealed in its own short transaction that locks just that
// row (waiting for a request that holds it, which a token passed over
// would outlast the old key), so it is safe while replicas serve. A row
// no configured key opens is left as it is (in keyset order, so it is not
// found again): it opens again once its key is put back.
func (t *Tokens) RotateKeys(ctx context.Context) (resealed, unreadable int, err error) {
	primary := t.keys.PrimaryKeyID()
	after := []byte{} // sorts before every session hash
	resealed, unreadable, err = database.ResealRows(ctx, t.pool, func(ctx context.Context, tx pgx.Tx) (database.RowStep, error) {
		var (
			hash, sealed []byte
			site         uuid.UUID
			kid          string
		)
		err := tx.QueryRow(ctx, `SELECT session_hash FROM owner_session_tokens WHERE key_id <> $1 AND session_hash > $2
			ORDER BY session_hash LIMIT 1`, primary, after).Scan(&hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.NoRowLeft, nil
		}
		if err != nil {
			return 0, err
		}
		after = hash
		// Locked apart, waiting for a request that holds it: a row
		// passed over would stay under the old key.
		err = tx.QueryRow(ctx, `SELECT site_id, key_id, token FROM owner_session_tokens
			WHERE session_hash = $1 AND key_id <> $2 FOR UPDATE`, hash, primary).Scan(&site, &kid, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			return database.RowPassed, nil // re-sealed or gone meanwhile
		}
		if err != nil {
			return 0, err
		}
		ad := tokenAD(site, hash)
		plain, err := t.keys.Open(kid, sealed, ad)
		if err != nil {
			return database.RowUnreadable, nil
		}
		newKid, resealedToken, err := t.keys.Seal(plain, ad)
		clear(plain)
		if err != nil {
			return 0, err
		}
		_, err = tx.Exec(ctx, `UPDATE owner_session_tokens SET key_id = $2, token = $3 WHERE session_hash = $1`, hash, newKid, resealedToken)
		return database.RowResealed, err
	})
	if err != nil {
		return resealed, unreadable, fmt.Errorf("pagesession: rotate keys: %w", err)
	}
	return resealed, unreadable, nil
}
