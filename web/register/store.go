package register

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// The stages of pending_registrations_stage_check.
const (
	// stageClient waits for the OAuth client and its proof of ownership.
	stageClient = "client"
	// stageRegistered: the site exists; the row lets the registrant's
	// browser see the result (and add an API credential) until it expires.
	stageRegistered = "registered"
)

// errUnknown: no registration with that id is open in this browser: it
// never existed, expired, or belongs to another browser. The person is told
// the same in every case.
var errUnknown = errors.New("register: no such registration in this browser")

// pendingReg is one registration in progress, its secret opened.
type pendingReg struct {
	ID          uuid.UUID
	Stage       string
	Kind        string
	DisplayName string
	BaseURL     string
	Settings    json.RawMessage
	IdentityKey string
	ClientID    string
	Secret      secrets.Secret
	SiteID      uuid.UUID
	ERPUser     string
	ExpiresAt   time.Time
	// Slug is the site's name, chosen when the registration began so that
	// the page can give the site's redirect URI before the site exists;
	// "" for a registration begun before sites had their own.
	Slug string
}

// callbackPath is the path of the redirect URI the registration's OAuth
// client must have.
func (p pendingReg) callbackPath() string { return sites.CallbackPathOf(p.Slug, p.Slug == "") }

// store keeps registrations in pending_registrations.
type store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
}

func browserHash(browser string) []byte {
	h := sha256.Sum256([]byte(browser))
	return h[:]
}

func secretAD(id uuid.UUID) []byte {
	return secrets.AdditionalData("pending_registration", id.String(), "client_secret")
}

// errFull: as many registrations are waiting to be finished as the
// deployment allows (Deps.MaxPending); wait is how long until the first
// of them expires.
type errFull struct {
	waiting int
	wait    time.Duration
}

func (e *errFull) Error() string {
	return fmt.Sprintf("register: %d registrations are waiting to be finished, the bound", e.waiting)
}

// errNetworkFull: as many registrations started from the start's network
// are waiting to be finished as one network may keep
// (Deps.MaxPendingPerNetwork); wait is how long until the first of them
// expires.
type errNetworkFull struct {
	waiting int
	wait    time.Duration
	// unanswered is how many of them are starts whose ERP did not answer
	// as one (or has not answered yet), which count as places held.
	unanswered int
}

func (e *errNetworkFull) Error() string {
	return fmt.Sprintf("register: %d registrations of one network are waiting to be finished, its bound", e.waiting)
}

// bounds are the bounds of the registrations waiting to be finished that
// a start must stay within, and the network it comes from.
type bounds struct {
	// all bounds the deployment's (Deps.MaxPending).
	all int
	// perNetwork bounds those of network (Deps.MaxPendingPerNetwork).
	perNetwork int
	// network is the start's source network (sourcelimit.Network).
	network string
}

// waitingLock is the advisory lock under which a registration is counted
// and stored, so that replicas starting registrations at once cannot
// together pass the bounds: each counts only after the one before it has
// committed its row.
const waitingLock = "erpgate pending registrations bound"

// waitingQuery counts the registrations waiting to be finished (stage
// client, not expired), places held (reserve) included, in all and of the
// network $1, and says how long until the first of each expires; and how
// many of the network's are places no browser holds (the start's ERP did
// not answer, or has not yet).
const waitingQuery = `
	SELECT count(*), coalesce(extract(epoch FROM min(expires_at) - now()) * 1000, 0)::bigint,
	       count(*) FILTER (WHERE source_network = $1),
	       coalesce(extract(epoch FROM min(expires_at) FILTER (WHERE source_network = $1) - now()) * 1000, 0)::bigint,
	       count(*) FILTER (WHERE source_network = $1 AND browser_hash = ''::bytea)
	FROM pending_registrations WHERE stage = 'client' AND expires_at > now()`

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// full returns *errFull when b.all or more registrations are waiting to
// be finished, else *errNetworkFull when b.perNetwork or more of
// b.network's are, nil when fewer are.
func full(ctx context.Context, db queryRower, b bounds) error {
	var (
		n, ofNetwork, unanswered int
		wait, networkWait        int64
	)
	if err := db.QueryRow(ctx, waitingQuery, b.network).Scan(&n, &wait, &ofNetwork, &networkWait, &unanswered); err != nil {
		return fmt.Errorf("register: count waiting registrations: %w", database.Classify(err))
	}
	if n >= b.all {
		return &errFull{waiting: n, wait: time.Duration(wait) * time.Millisecond}
	}
	if ofNetwork >= b.perNetwork {
		return &errNetworkFull{waiting: ofNetwork, wait: time.Duration(networkWait) * time.Millisecond, unanswered: unanswered}
	}
	return nil
}

// full is full without a lock: a start asks it before it contacts the
// ERP, and create asks again under the lock.
func (st *store) full(ctx context.Context, b bounds) error { return full(ctx, st.pool, b) }

// sweep removes registrations that expired: they leave nothing behind.
func (st *store) sweep(ctx context.Context) (int64, error) {
	tag, err := st.pool.Exec(ctx, `DELETE FROM pending_registrations WHERE expires_at <= now()`)
	if err != nil {
		return 0, fmt.Errorf("register: sweep: %w", database.Classify(err))
	}
	return tag.RowsAffected(), nil
}

// reserve holds a place, within b's bounds, for a start about to contact
// its ERP, and sweeps expired ones: a registration at stage client,
// started from b.network, that no browser can open (its browser_hash is
// empty, which no browser's hash is). claim gives it to the start's
// browser once the ERP answered as one; a start whose ERP did not keeps
// its place for failedStartHold (release), so that every start that
// makes erpgate contact an address counts, answered or not. Past one of
// b's bounds it stores nothing and returns full's error.
func (st *store) reserve(ctx context.Context, p pendingReg, ttl time.Duration, b bounds) (uuid.UUID, error) {
	if _, err := st.sweep(ctx); err != nil {
		return uuid.Nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("register: new id: %w", err)
	}
	err = pgx.BeginFunc(ctx, st.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, waitingLock); err != nil {
			return fmt.Errorf("register: lock the bound: %w", database.Classify(err))
		}
		// Counted after the lock, in a statement of its own: under READ
		// COMMITTED it sees the rows of every start that held the lock
		// before.
		if err := full(ctx, tx, b); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO pending_registrations (id, browser_hash, stage, kind, display_name, base_url, settings, identity_key, slug, expires_at, source_network)
			VALUES ($1, $2, 'client', $3, $4, $5, $6::jsonb, $7, $8, now() + $9::interval, $10)`,
			id, []byte{}, p.Kind, p.DisplayName, p.BaseURL, string(p.Settings), p.IdentityKey, newSlug(p.DisplayName),
			fmt.Sprintf("%d milliseconds", ttl.Milliseconds()), b.network)
		if err != nil {
			return fmt.Errorf("register: create: %w", database.Classify(err))
		}
		return nil
	})
	if err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// failedStartHold is how long the place of a start whose address did not
// answer as an ERP is held (release), rather than the registration's
// whole TTL: an administrator who mistypes the address a few times is
// kept out for minutes, not half an hour, while one network still makes
// erpgate fetch at most its bound's number of addresses
// (Deps.MaxPendingPerNetwork, 5) in any such span, and the deployment
// at most Deps.MaxPending.
const failedStartHold = 5 * time.Minute

// release shortens the place reserve held, id, for a start whose ERP did
// not answer as one, to expire within hold from now (never later than it
// would have). A place a browser claimed is left as it is.
func (st *store) release(ctx context.Context, id uuid.UUID, hold time.Duration) error {
	_, err := st.pool.Exec(ctx, `
		UPDATE pending_registrations SET expires_at = least(expires_at, now() + $2::interval)
		WHERE id = $1 AND browser_hash = ''::bytea AND stage = 'client'`, id, fmt.Sprintf("%d milliseconds", hold.Milliseconds()))
	if err != nil {
		return fmt.Errorf("register: release a failed start's place: %w", database.Classify(err))
	}
	return nil
}

// claim gives the place reserve held, id, to browser: the registration
// opens there. errUnknown when it expired meanwhile.
func (st *store) claim(ctx context.Context, id uuid.UUID, browser string) error {
	tag, err := st.pool.Exec(ctx, `
		UPDATE pending_registrations SET browser_hash = $2
		WHERE id = $1 AND browser_hash = ''::bytea AND stage = 'client' AND expires_at > now()`, id, browserHash(browser))
	if err != nil {
		return fmt.Errorf("register: claim: %w", database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return errUnknown
	}
	return nil
}

// get returns the registration id if it is open (not expired) in browser.
// Any other case is errUnknown.
func (st *store) get(ctx context.Context, id uuid.UUID, browser string) (pendingReg, error) {
	p, hash, err := st.load(ctx, id)
	if err != nil {
		return pendingReg{}, err
	}
	if browser == "" || subtle.ConstantTimeCompare(hash, browserHash(browser)) != 1 {
		return pendingReg{}, errUnknown
	}
	return p, nil
}

// load returns the open registration id, whatever the browser; only the
// proof's Target uses it (erpadmin has bound the sign-in to the browser).
func (st *store) load(ctx context.Context, id uuid.UUID) (pendingReg, []byte, error) {
	var (
		p        pendingReg
		hash     []byte
		keyID    *string
		ct       []byte
		siteID   *uuid.UUID
		settings []byte
	)
	err := st.pool.QueryRow(ctx, `
		SELECT browser_hash, stage, kind, display_name, base_url, settings, identity_key, client_id, key_id,
		       secret_ciphertext, site_id, erp_user, expires_at, slug
		FROM pending_registrations WHERE id = $1 AND expires_at > now()`, id).
		Scan(&hash, &p.Stage, &p.Kind, &p.DisplayName, &p.BaseURL, &settings, &p.IdentityKey, &p.ClientID, &keyID,
			&ct, &siteID, &p.ERPUser, &p.ExpiresAt, &p.Slug)
	if database.IsNoRows(err) {
		return pendingReg{}, nil, errUnknown
	}
	if err != nil {
		return pendingReg{}, nil, fmt.Errorf("register: load: %w", database.Classify(err))
	}
	p.ID, p.Settings = id, settings
	if siteID != nil {
		p.SiteID = *siteID
	}
	if keyID != nil && ct != nil {
		pt, err := st.keys.Open(*keyID, ct, secretAD(id))
		if err != nil {
			return pendingReg{}, nil, fmt.Errorf("register: open client secret: %w", err)
		}
		p.Secret = secrets.Secret(pt)
	}
	return p, hash, nil
}

// setClient stores the OAuth client of an open registration that is still
// waiting for its proof. first says whether it is the registration's first
// client (it had none before).
func (st *store) setClient(ctx context.Context, id uuid.UUID, clientID string, secret secrets.Secret) (first bool, err error) {
	kid, ct, err := st.keys.Seal([]byte(secret.Reveal()), secretAD(id))
	if err != nil {
		return false, fmt.Errorf("register: seal client secret: %w", err)
	}
	// The row is locked by the subquery, so that two steps at once do
	// not both see it without a client.
	err = st.pool.QueryRow(ctx, `
		UPDATE pending_registrations p SET client_id = $2, key_id = $3, secret_ciphertext = $4
		FROM (SELECT client_id FROM pending_registrations WHERE id = $1 FOR UPDATE) before
		WHERE p.id = $1 AND p.stage = 'client' AND p.expires_at > now()
		RETURNING before.client_id = ''`, id, clientID, kid, ct).Scan(&first)
	if database.IsNoRows(err) {
		return false, errUnknown
	}
	if err != nil {
		return false, fmt.Errorf("register: set client: %w", database.Classify(err))
	}
	return first, nil
}

// markRegistered records that the registration became site siteID, proven
// by erpUser; the candidate secret is dropped (the site's connection holds
// it now), and so is the network it was started from (it no longer waits).
func (st *store) markRegistered(ctx context.Context, id, siteID uuid.UUID, erpUser string) error {
	tag, err := st.pool.Exec(context.WithoutCancel(ctx), `
		UPDATE pending_registrations SET stage = 'registered', site_id = $2, erp_user = $3, key_id = NULL, secret_ciphertext = NULL, source_network = ''
		WHERE id = $1 AND stage = 'client'`, id, siteID, erpUser)
	if err != nil {
		return fmt.Errorf("register: mark registered: %w", database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return errUnknown
	}
	return nil
}
