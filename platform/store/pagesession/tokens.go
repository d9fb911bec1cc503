package pagesession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/leases"
)

// ErrNoToken: no ERP token is kept for this session on this site (it was
// signed out, swept, or began before tokens were kept).
var ErrNoToken = errors.New("pagesession: no ERP token kept for this session")

// Tokens keeps, in owner_session_tokens, the ERP tokens an owner signed
// in with on a site's owner page, for the life of that session: each
// change the owner makes asks the ERP again with the access token whether
// they still administer the site, and the refresh token (when the ERP
// issued one) renews an access token that expires before the session
// does (Refresh). The tokens are sealed together with AES-256-GCM under
// the keyring's primary key, bound to their site and session; every
// query takes the site's id. Nothing here logs or returns a token but
// Get and Kept.
type Tokens struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
	// group runs one refresh per session and stale token on this
	// replica, however many requests need it (Refresh).
	group singleflight.Group
}

// NewTokens returns the store on pool, sealing with keys.
func NewTokens(pool *pgxpool.Pool, keys *secrets.Keyring) *Tokens {
	return &Tokens{pool: pool, keys: keys}
}

func sessionHash(cookie string) []byte {
	sum := sha256.Sum256([]byte("erpgate owner session token\x00" + cookie))
	return sum[:]
}

// tokenAD binds a sealed row to its site and session. A row holds the
// ERP's tokens as JSON (keptTokens) under the field "erp_tokens"; rows
// kept before refresh tokens were (an access token alone, under the field
// "access_token") are still read. A replica that predates the JSON rows
// cannot open them, so it finds no token there rather than sending the
// ERP something else as one.
func tokenAD(siteID uuid.UUID, hash []byte) []byte {
	return secrets.AdditionalData("owner_session_tokens", siteID.String(), hex.EncodeToString(hash), "erp_tokens")
}

// accessOnlyAD is tokenAD of a row that holds an access token alone.
func accessOnlyAD(siteID uuid.UUID, hash []byte) []byte {
	return secrets.AdditionalData("owner_session_tokens", siteID.String(), hex.EncodeToString(hash), "access_token")
}

// keptTokens is a row's plaintext. ExpiresAt is Unix seconds, 0 when the
// ERP stated no lifetime.
type keptTokens struct {
	Access    string `json:"access"`
	Refresh   string `json:"refresh,omitempty"`
	ExpiresAt int64  `json:"expires_at,omitempty"`
}

// seal seals tok for the session hash on siteID.
func (t *Tokens) seal(siteID uuid.UUID, hash []byte, tok connector.StoredToken) (string, []byte, error) {
	k := keptTokens{Access: tok.Access.Reveal(), Refresh: tok.Refresh.Reveal()}
	if !tok.ExpiresAt.IsZero() {
		k.ExpiresAt = tok.ExpiresAt.Unix()
	}
	plain, err := json.Marshal(k)
	if err != nil {
		return "", nil, err
	}
	defer clear(plain)
	return t.keys.Seal(plain, tokenAD(siteID, hash))
}

// open opens a row sealed for the session hash on siteID, of either form.
func (t *Tokens) open(siteID uuid.UUID, hash []byte, kid string, sealed []byte) (connector.StoredToken, error) {
	if plain, err := t.keys.Open(kid, sealed, tokenAD(siteID, hash)); err == nil {
		defer clear(plain)
		var k keptTokens
		if err := json.Unmarshal(plain, &k); err != nil || k.Access == "" {
			return connector.StoredToken{}, errors.New("pagesession: a kept ERP token that is not one")
		}
		tok := connector.StoredToken{Access: secrets.Secret(k.Access), Refresh: secrets.Secret(k.Refresh)}
		if k.ExpiresAt != 0 {
			tok.ExpiresAt = time.Unix(k.ExpiresAt, 0)
		}
		return tok, nil
	}
	plain, err := t.keys.Open(kid, sealed, accessOnlyAD(siteID, hash))
	if err != nil {
		return connector.StoredToken{}, err
	}
	return connector.StoredToken{Access: secrets.Secret(plain)}, nil
}

// Keep stores token, user's ERP access token, for the session of cookie on
// site siteID until expires (the session's own expiry): KeepTokens
// without a refresh token or a known lifetime.
func (t *Tokens) Keep(ctx context.Context, siteID uuid.UUID, cookie, user string, token secrets.Secret, expires time.Time) error {
	return t.KeepTokens(ctx, siteID, cookie, user, connector.StoredToken{Access: token}, expires)
}

// KeepTokens stores tok, user's ERP tokens (the access token, and the
// refresh token and the access token's expiry when the ERP gave them),
// for the session of cookie on site siteID until expires (the session's
// own expiry).
func (t *Tokens) KeepTokens(ctx context.Context, siteID uuid.UUID, cookie, user string, tok connector.StoredToken, expires time.Time) error {
	hash := sessionHash(cookie)
	kid, sealed, err := t.seal(siteID, hash, tok)
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

// Get returns the ERP user and access token kept for the session of
// cookie on site siteID, or ErrNoToken.
func (t *Tokens) Get(ctx context.Context, siteID uuid.UUID, cookie string) (string, secrets.Secret, error) {
	user, tok, err := t.Kept(ctx, siteID, cookie)
	return user, tok.Access, err
}

// Kept returns the ERP user and tokens kept for the session of cookie on
// site siteID, or ErrNoToken.
func (t *Tokens) Kept(ctx context.Context, siteID uuid.UUID, cookie string) (string, connector.StoredToken, error) {
	return t.read(ctx, siteID, sessionHash(cookie))
}

func (t *Tokens) read(ctx context.Context, siteID uuid.UUID, hash []byte) (string, connector.StoredToken, error) {
	var user, kid string
	var sealed []byte
	err := t.pool.QueryRow(ctx, `
		SELECT erp_user, key_id, token FROM owner_session_tokens
		WHERE session_hash = $1 AND site_id = $2 AND expires_at > now() - interval '1 hour'`, hash, siteID).Scan(&user, &kid, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", connector.StoredToken{}, ErrNoToken
	}
	if err != nil {
		return "", connector.StoredToken{}, database.Classify(err)
	}
	tok, err := t.open(siteID, hash, kid, sealed)
	if err != nil {
		// A key dropped from the ring, or a row that is not this one's:
		// as good as none.
		return "", connector.StoredToken{}, fmt.Errorf("%w: it cannot be opened (key %q)", ErrNoToken, kid)
	}
	return user, tok, nil
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
		// Re-sealed in the form it was kept in: the access token alone
		// stays so, for a replica that reads only that.
		ad := tokenAD(site, hash)
		plain, err := t.keys.Open(kid, sealed, ad)
		if err != nil {
			ad = accessOnlyAD(site, hash)
			if plain, err = t.keys.Open(kid, sealed, ad); err != nil {
				return database.RowUnreadable, nil
			}
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

// ErrRefreshOvertaken: the session's tokens changed while Refresh renewed
// them (its lease ran out and another refresh took over): what it renewed
// is not kept.
var ErrRefreshOvertaken = errors.New("pagesession: the owner's ERP token changed while it was being refreshed")

// refreshTimeout bounds one shared refresh, which runs detached from the
// requests waiting for it.
const refreshTimeout = 30 * time.Second

// Refresh renews the ERP tokens kept for the session of cookie on site
// siteID when the access token kept is still stale (the one the caller
// holds, which expired or the ERP refused), with renew (the connector's
// refresh grant), and keeps the new pair in its place, sealed and bound
// as before; it returns the tokens as they are then. When another
// request, on this replica or another, renewed them meanwhile, it returns
// theirs without asking the ERP.
//
// It is the renewal of people's ERP tokens (authserver) and of service
// connections' (erptokens), for this table: one refresh per session and
// stale token on this replica (singleflight), and one at a time across
// replicas under a lease on the session (platform/store/leases), holding
// no database connection while the ERP answers. ERPs rotate refresh
// tokens, and Acumatica's die on use: two refreshes racing with one would
// make the loser's look dead and sign the owner out.
//
// renew's errors are returned as they are (connector.ErrRefreshTokenDead
// among them); a session whose tokens are gone is ErrNoToken.
func (t *Tokens) Refresh(ctx context.Context, siteID uuid.UUID, cookie string, stale secrets.Secret, renew connector.RenewToken) (connector.StoredToken, error) {
	hash := sessionHash(cookie)
	staleSum := sha256.Sum256([]byte(stale.Reveal()))
	key := siteID.String() + "\x00" + hex.EncodeToString(hash) + "\x00" + hex.EncodeToString(staleSum[:8])
	v, err, _ := t.group.Do(key, func() (any, error) {
		// Detached: one request giving up must not fail the others.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return t.refreshLeased(rctx, siteID, hash, stale, renew)
	})
	if err != nil {
		return connector.StoredToken{}, err
	}
	return v.(connector.StoredToken), nil
}

// refreshLeaseKey names the lease on refreshing the tokens of the session
// hash.
func refreshLeaseKey(hash []byte) string { return "owner_session_token:" + hex.EncodeToString(hash) }

func (t *Tokens) refreshLeased(ctx context.Context, siteID uuid.UUID, hash []byte, stale secrets.Secret, renew connector.RenewToken) (connector.StoredToken, error) {
	lease, err := leases.Take(ctx, t.pool, siteID, refreshLeaseKey(hash))
	if err != nil {
		return connector.StoredToken{}, fmt.Errorf("pagesession: refresh the owner's ERP token: %w", err)
	}
	_, current, err := t.read(ctx, siteID, hash)
	if err != nil {
		lease.Drop(ctx, t.pool)
		return connector.StoredToken{}, err
	}
	if current.Access != stale {
		// Renewed while this one waited for the lease.
		lease.Drop(ctx, t.pool)
		return current, nil
	}
	tok, err := renew(ctx, current)
	if err != nil {
		lease.Drop(ctx, t.pool)
		return connector.StoredToken{}, err
	}
	next := connector.StoredToken{Access: tok.AccessToken, Refresh: tok.RefreshToken}
	if !next.Refresh.IsSet() {
		// The ERP sent none: the one presented stays valid.
		next.Refresh = current.Refresh
	}
	if tok.ExpiresIn > 0 {
		next.ExpiresAt = time.Now().Add(tok.ExpiresIn)
	}
	kid, sealed, err := t.seal(siteID, hash, next)
	if err != nil {
		lease.Drop(ctx, t.pool)
		return connector.StoredToken{}, fmt.Errorf("pagesession: seal the owner's ERP token: %w", err)
	}
	err = pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		if err := lease.End(ctx, tx); errors.Is(err, leases.ErrLost) {
			return ErrRefreshOvertaken
		} else if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE owner_session_tokens SET key_id = $3, token = $4 WHERE session_hash = $1 AND site_id = $2`,
			hash, siteID, kid, sealed)
		if err != nil {
			return database.Classify(err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNoToken // signed out meanwhile
		}
		return nil
	})
	if err != nil {
		lease.Drop(ctx, t.pool) // rolled back with the rest; not taken from another holder
		return connector.StoredToken{}, err
	}
	return next, nil
}
