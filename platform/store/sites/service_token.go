package sites

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ServiceTokenPrefix starts every service token ("egs_..."), so a leaked
// token is recognisable to secret scanners and to people.
const ServiceTokenPrefix = "egs"

// maxServiceTokenLength bounds what ResolveServiceToken will hash; real
// tokens are 60 characters (47 for those issued before they carried a
// check value).
const maxServiceTokenLength = 256

// ServiceToken describes a token for /service/mcp. The token's value is
// never stored: only its SHA-256 and a display prefix.
type ServiceToken struct {
	ID     uuid.UUID
	SiteID uuid.UUID
	Name   string
	// Prefix is the start of the token ("egs_AbC123"), for recognising it.
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	Revoked    bool
	RevokedAt  *time.Time
	// ExpiresAt is when the token stops working; nil: never.
	ExpiresAt *time.Time
	// Expired reports whether ExpiresAt had passed, by the database's
	// clock, when the token was read.
	Expired bool
}

// MaxServiceTokenLifetimeDays is the longest lifetime a token may be issued
// with, in days: a year, a leap day included.
const MaxServiceTokenLifetimeDays = 366

// ValidateTokenLifetimeDays checks a lifetime in days for
// IssueServiceTokenWithLifetime: 0 (never expires) or 1 to
// MaxServiceTokenLifetimeDays.
func ValidateTokenLifetimeDays(days int) error {
	if days < 0 || days > MaxServiceTokenLifetimeDays {
		return fieldInvalidf("expires_in_days", fmt.Sprintf("must be between 1 and %d days", MaxServiceTokenLifetimeDays),
			"a service token's lifetime must be between 1 and %d days, or none for a token that never expires", MaxServiceTokenLifetimeDays)
	}
	return nil
}

// DefaultMaxActiveServiceTokens is how many active (neither revoked nor
// expired) service tokens a site may have unless the store is told
// otherwise (SetMaxActiveServiceTokens). A site needs one token per
// program that calls it, and a new one while an old one is being
// replaced: a few dozen at most. Each active token is a caller with
// budgets of its own at the MCP doors and an entry in every replica's
// token cache, so without a bound one site's owner could multiply both.
const DefaultMaxActiveServiceTokens = 100

// SetMaxActiveServiceTokens sets how many active service tokens a site
// may have (n < 1: DefaultMaxActiveServiceTokens). Set it once, before the
// store is used.
func (s *Store) SetMaxActiveServiceTokens(n int) { s.maxActiveTokens = n }

// MaxActiveServiceTokens is how many active service tokens a site may
// have.
func (s *Store) MaxActiveServiceTokens() int {
	if s.maxActiveTokens < 1 {
		return DefaultMaxActiveServiceTokens
	}
	return s.maxActiveTokens
}

// serviceTokenColumns is the column list scanServiceToken reads, in order.
const serviceTokenColumns = `id, site_id, name, prefix, created_at, last_used_at, revoked, revoked_at, expires_at,
	(expires_at IS NOT NULL AND expires_at <= now())`

// IssueServiceToken creates a service token for the site that never
// expires and returns its value, which exists nowhere else and cannot be
// shown again. The site must have an api_token connection (else
// ErrNoAPIConnection) and fewer than MaxActiveServiceTokens active tokens
// (else a *TooManyServiceTokensError), counted under a lock of the site's
// row so that replicas issuing at once cannot pass the bound together. It
// also reports ErrNotFound and, for a bad name, ErrInvalid.
func (s *Store) IssueServiceToken(ctx context.Context, siteID uuid.UUID, name string) (ServiceToken, secrets.Secret, error) {
	return s.IssueServiceTokenWithLifetime(ctx, siteID, name, 0)
}

// IssueServiceTokenWithLifetime is IssueServiceToken for a token that
// expires lifetimeDays 24-hour days after it is issued (0: never). A
// lifetime out of ValidateTokenLifetimeDays's range is ErrInvalid.
func (s *Store) IssueServiceTokenWithLifetime(ctx context.Context, siteID uuid.UUID, name string, lifetimeDays int) (ServiceToken, secrets.Secret, error) {
	return s.IssueServiceTokenBy(ctx, ByOperator, siteID, name, lifetimeDays)
}

// IssueServiceTokenBy is IssueServiceTokenWithLifetime issued by party by:
// the owner (ByOwner) is refused ErrOperatorDisabled on a site the
// operator disabled, checked under the lock of the site's row, so a
// disable made after the owner's request loaded the site still holds.
func (s *Store) IssueServiceTokenBy(ctx context.Context, by Party, siteID uuid.UUID, name string, lifetimeDays int) (ServiceToken, secrets.Secret, error) {
	issue, err := s.newServiceToken(siteID, name, lifetimeDays)
	if err != nil {
		return ServiceToken{}, "", err
	}
	var st ServiceToken
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		st, err = s.issueServiceTokenTx(ctx, tx, by, siteID, issue)
		return err
	})
	if err != nil {
		return ServiceToken{}, "", fmt.Errorf("sites: issue service token for site %s: %w", siteID, database.Classify(err))
	}
	return st, issue.token.Value, nil
}

// tokenToIssue is a service token made and not yet stored.
type tokenToIssue struct {
	id           uuid.UUID
	name         string
	lifetimeDays int
	token        secrets.Token
}

// newServiceToken checks a token's name and lifetime and makes the token.
func (s *Store) newServiceToken(siteID uuid.UUID, name string, lifetimeDays int) (tokenToIssue, error) {
	if err := ValidateTokenName(name); err != nil {
		return tokenToIssue{}, fmt.Errorf("sites: issue service token for site %s: %w", siteID, err)
	}
	if err := ValidateTokenLifetimeDays(lifetimeDays); err != nil {
		return tokenToIssue{}, fmt.Errorf("sites: issue service token for site %s: %w", siteID, err)
	}
	if len(s.tokenChecks) == 0 {
		return tokenToIssue{}, fmt.Errorf("sites: issue service token for site %s: the store has no keyring", siteID)
	}
	token, err := secrets.NewTaggedToken(ServiceTokenPrefix, s.tokenChecks[0])
	if err != nil {
		return tokenToIssue{}, fmt.Errorf("sites: issue service token for site %s: %w", siteID, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return tokenToIssue{}, fmt.Errorf("sites: issue service token for site %s: new id: %w", siteID, err)
	}
	return tokenToIssue{id: id, name: name, lifetimeDays: lifetimeDays, token: token}, nil
}

// issueServiceTokenTx stores issue for site siteID in tx, as party by
// (IssueServiceTokenBy).
func (s *Store) issueServiceTokenTx(ctx context.Context, tx pgx.Tx, by Party, siteID uuid.UUID, issue tokenToIssue) (ServiceToken, error) {
	// The site's row stays locked until the token is in: another replica
	// issuing for the same site waits here, and then counts this token
	// (each statement sees what committed before it began). FOR NO KEY
	// UPDATE does not hold off the key-share lock the new token's foreign
	// key takes, nor the resolving of tokens.
	var disabledBy string
	if err := tx.QueryRow(ctx, `SELECT coalesce(disabled_by, '') FROM sites WHERE id = $1 FOR NO KEY UPDATE`, siteID).Scan(&disabledBy); err != nil {
		if database.IsNoRows(err) {
			return ServiceToken{}, ErrNotFound
		}
		return ServiceToken{}, err
	}
	if by == ByOwner && Party(disabledBy) == ByOperator {
		return ServiceToken{}, ErrOperatorDisabled
	}
	var active int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM service_tokens
		WHERE site_id = $1 AND NOT revoked AND (expires_at IS NULL OR expires_at > now())`, siteID).Scan(&active); err != nil {
		return ServiceToken{}, err
	}
	if bound := s.MaxActiveServiceTokens(); active >= bound {
		return ServiceToken{}, &TooManyServiceTokensError{Active: active, Bound: bound}
	}
	// The token only appears if the api_token connection exists at that
	// moment. The expiry is counted from created_at's own now(), in hours,
	// so that a lifetime is the same length across a daylight-saving
	// change.
	st, err := scanServiceToken(tx.QueryRow(ctx, `
		INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, expires_at)
		SELECT $1, $2, $3, $4, $5, CASE WHEN $6::int > 0 THEN now() + $6::int * interval '24 hours' END
		WHERE EXISTS (SELECT 1 FROM connections WHERE site_id = $2 AND type = 'api_token')
		RETURNING `+serviceTokenColumns,
		issue.id, siteID, issue.name, issue.token.Hash[:], issue.token.DisplayPrefix, issue.lifetimeDays))
	if database.IsNoRows(err) {
		return ServiceToken{}, ErrNoAPIConnection
	}
	return st, err
}

// serviceTokenCheckUse names the keys of service tokens' check values
// (secrets.Keyring.DeriveKeys).
const serviceTokenCheckUse = "service token check value"

// IssuedServiceToken reports whether token carries the check value of a
// service token this deployment issued, under any key of its keyring (a
// token issued before a rotation verifies while its key stays in
// ERPGATE_ENCRYPTION_KEYS). It looks nothing up: such a token may since
// have been revoked, have expired or be gone (deleted with its site, or
// issued by another deployment sharing the key). Tokens issued before check values existed report false.
func (s *Store) IssuedServiceToken(token string) bool {
	return secrets.TokenTagged(ServiceTokenPrefix, token, s.tokenChecks)
}

// ListServiceTokens returns the site's tokens, revoked ones included, oldest
// first. Values and hashes are never returned.
func (s *Store) ListServiceTokens(ctx context.Context, siteID uuid.UUID) ([]ServiceToken, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+serviceTokenColumns+` FROM service_tokens
		WHERE site_id = $1 ORDER BY created_at, id`, siteID)
	if err != nil {
		return nil, fmt.Errorf("sites: list service tokens of site %s: %w", siteID, database.Classify(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceToken, error) { return scanServiceToken(r) })
	if err != nil {
		return nil, fmt.Errorf("sites: list service tokens of site %s: %w", siteID, database.Classify(err))
	}
	return list, nil
}

// ListServiceTokensPage returns up to limit of the site's tokens, revoked
// and expired ones included, oldest first (by created_at, then id), after
// the place the cursor after names ("": from the first), and the cursor
// of the next page, "" on the last.
//
// A cursor holds the place itself, the created_at and id of the last
// token of its page, not a reference to that token: the next page comes
// even when that token was deleted meanwhile (pruned after its
// retention, or deleted by hand). It is tagged with
// a key derived from the keyring and bound to the site, so a cursor that
// was not made for this site (another site's, altered or made up) is
// ErrBadCursor. A bare token id, the cursor of pages made before cursors
// held the place, is still read for the token's place, and is
// ErrNotFound when the site has no such token.
func (s *Store) ListServiceTokensPage(ctx context.Context, siteID uuid.UUID, after string, limit int) ([]ServiceToken, string, error) {
	from, err := s.tokenPagePlace(ctx, siteID, after)
	if err != nil {
		return nil, "", fmt.Errorf("sites: list service tokens of site %s: %w", siteID, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT `+serviceTokenColumns+` FROM service_tokens
		WHERE site_id = $1 AND ($2::boolean OR (created_at, id) > ($3, $4))
		ORDER BY created_at, id LIMIT $5`, siteID, from == nil, from.createdAt(), from.tokenID(), limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("sites: list service tokens of site %s: %w", siteID, database.Classify(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceToken, error) { return scanServiceToken(r) })
	if err != nil {
		return nil, "", fmt.Errorf("sites: list service tokens of site %s: %w", siteID, database.Classify(err))
	}
	if len(list) <= limit {
		return list, "", nil
	}
	last := list[limit-1]
	next, err := s.tokenPageCursor(siteID, tokenPlace{at: last.CreatedAt, id: last.ID})
	if err != nil {
		return nil, "", fmt.Errorf("sites: list service tokens of site %s: %w", siteID, err)
	}
	return list[:limit], next, nil
}

// serviceTokenCursorUse names the keys of the cursors of the pages of a
// site's tokens (secrets.Keyring.DeriveKeys).
const serviceTokenCursorUse = "service token list cursor"

// maxTokenCursorLength bounds what tokenPagePlace reads; the cursors
// tokenPageCursor makes are 47 characters.
const maxTokenCursorLength = 100

// tokenPlace is a place in the order of a site's tokens: the created_at
// and id of the token before it.
type tokenPlace struct {
	at time.Time
	id uuid.UUID
}

// createdAt and tokenID are the place's values, the zero ones for none.
func (p *tokenPlace) createdAt() time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.at
}

func (p *tokenPlace) tokenID() uuid.UUID {
	if p == nil {
		return uuid.Nil
	}
	return p.id
}

// tokenPageCursor writes place as a cursor of the site's token list: the
// place, as the unpadded base64url encoding of created_at in Unix
// microseconds (as Postgres keeps it) and the id, followed by a check
// value (secrets.TagText) made over the site's id and the place, under
// the keyring's primary key.
func (s *Store) tokenPageCursor(siteID uuid.UUID, place tokenPlace) (string, error) {
	if len(s.cursorKeys) == 0 {
		return "", fmt.Errorf("the store has no keyring to make a page cursor with")
	}
	var raw [24]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(place.at.UnixMicro()))
	copy(raw[8:], place.id[:])
	bound := siteID.String() + "/" + base64.RawURLEncoding.EncodeToString(raw[:])
	return strings.TrimPrefix(secrets.TagText(bound, s.cursorKeys[0]), siteID.String()+"/"), nil
}

// tokenPagePlace reads the cursor after of the site's token list: nil for
// "", the place a cursor tokenPageCursor made for the site holds, or the
// place of the token a bare id names.
func (s *Store) tokenPagePlace(ctx context.Context, siteID uuid.UUID, after string) (*tokenPlace, error) {
	if after == "" {
		return nil, nil
	}
	if id, err := uuid.Parse(after); err == nil {
		p := tokenPlace{}
		err := s.pool.QueryRow(ctx, `SELECT created_at, id FROM service_tokens WHERE site_id = $1 AND id = $2`, siteID, id).Scan(&p.at, &p.id)
		switch {
		case database.IsNoRows(err):
			return nil, fmt.Errorf("after %s: %w", id, ErrNotFound)
		case err != nil:
			return nil, database.Classify(err)
		}
		return &p, nil
	}
	if len(after) > maxTokenCursorLength {
		return nil, ErrBadCursor
	}
	text, ok := secrets.TaggedText(siteID.String()+"/"+after, s.cursorKeys)
	if !ok {
		return nil, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(text, siteID.String()+"/"))
	if err != nil || len(raw) != 24 {
		return nil, ErrBadCursor
	}
	p := tokenPlace{at: time.UnixMicro(int64(binary.BigEndian.Uint64(raw[:8]))).UTC()}
	copy(p.id[:], raw[8:])
	return &p, nil
}

// RecentServiceTokens is a site's tokens as a page lists them: every
// active one, which the bound keeps few, and only the latest of those that
// ended (revoked or expired), which nothing else bounds.
type RecentServiceTokens struct {
	// Active are the tokens neither revoked nor expired, oldest first.
	Active []ServiceToken
	// Ended are the most recently revoked or expired tokens, the latest
	// to end first.
	Ended []ServiceToken
	// EndedNotShown is how many tokens ended before those in Ended, up
	// to MaxEndedTokensCounted: when more did, it is MaxEndedTokensCounted
	// and MoreEndedNotShown is true.
	EndedNotShown int
	// MoreEndedNotShown reports that more than EndedNotShown tokens ended
	// before those in Ended.
	MoreEndedNotShown bool
}

// MaxEndedTokensCounted is how many of a site's tokens that ended before
// those a page lists ListRecentServiceTokens counts at most: the
// retention keeps ended tokens for 400 days, so an owner who issues and
// revokes in a loop may have hundreds of thousands, and a page says "more
// than" this many rather than reading every one of them to count them.
const MaxEndedTokensCounted = 1000

// liveToken is the condition of a token that neither was revoked nor has
// expired.
const liveToken = `NOT revoked AND (expires_at IS NULL OR expires_at > now())`

// recentEndedTokens reads up to $3 of the tokens of site $1 created at or
// after $2 that ended (revoked or expired), the latest to end first. Its
// order is that of the index service_tokens_site_ended_idx (migration
// 00045), which the page reads from the latest to end and stops after $3,
// rather than sorting every ended token of the site: change them together.
const recentEndedTokens = `SELECT ` + serviceTokenColumns + ` FROM service_tokens
	WHERE site_id = $1 AND created_at >= $2 AND NOT (` + liveToken + `)
	ORDER BY least(revoked_at, expires_at) DESC NULLS LAST, created_at DESC, id DESC LIMIT $3`

// countEndedTokens counts up to $3 of the tokens of site $1 created at or
// after $2 that ended, reading them in recentEndedTokens' order from the
// same index, so that it stops after $3 (and the few active tokens the
// index holds before them) however many the site has.
const countEndedTokens = `SELECT count(*) FROM (SELECT 1 FROM service_tokens
	WHERE site_id = $1 AND created_at >= $2 AND NOT (` + liveToken + `)
	ORDER BY least(revoked_at, expires_at) DESC NULLS LAST, created_at DESC, id DESC LIMIT $3) ended`

// ListRecentServiceTokens returns the site's tokens created at or after
// since (the zero time: all): every active one and the ended most
// recently ended ones, with how many ended before those, counted up to
// MaxEndedTokensCounted. A token ended when it was revoked or expired,
// whichever came first.
func (s *Store) ListRecentServiceTokens(ctx context.Context, siteID uuid.UUID, since time.Time, ended int) (RecentServiceTokens, error) {
	var out RecentServiceTokens
	// One snapshot for the three reads, so that a token revoked meanwhile
	// is counted once.
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		const live = liveToken
		rows, err := tx.Query(ctx, `SELECT `+serviceTokenColumns+` FROM service_tokens
			WHERE site_id = $1 AND created_at >= $2 AND `+live+` ORDER BY created_at, id`, siteID, since)
		if err != nil {
			return err
		}
		if out.Active, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceToken, error) { return scanServiceToken(r) }); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, recentEndedTokens, siteID, since, ended)
		if err != nil {
			return err
		}
		if out.Ended, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ServiceToken, error) { return scanServiceToken(r) }); err != nil {
			return err
		}
		// Those not shown are counted up to one past the bound, which
		// tells that there are more.
		var all int
		if err := tx.QueryRow(ctx, countEndedTokens, siteID, since, len(out.Ended)+MaxEndedTokensCounted+1).Scan(&all); err != nil {
			return err
		}
		out.EndedNotShown = max(all-len(out.Ended), 0)
		if out.EndedNotShown > MaxEndedTokensCounted {
			out.EndedNotShown, out.MoreEndedNotShown = MaxEndedTokensCounted, true
		}
		return nil
	})
	if err != nil {
		return RecentServiceTokens{}, fmt.Errorf("sites: list recent service tokens of site %s: %w", siteID, database.Classify(err))
	}
	return out, nil
}

// RevokeServiceToken revokes the site's token tokenID; revoking twice keeps
// the first revocation time. It reports ErrNotFound, also when tokenID
// belongs to another site.
func (s *Store) RevokeServiceToken(ctx context.Context, siteID, tokenID uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE service_tokens SET revoked = true, revoked_at = coalesce(revoked_at, now())
		WHERE site_id = $1 AND id = $2`, siteID, tokenID)
	if err != nil {
		return fmt.Errorf("sites: revoke service token %s of site %s: %w", tokenID, siteID, database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("sites: revoke service token %s of site %s: %w", tokenID, siteID, ErrNotFound)
	}
	s.notifyChanged(siteID)
	return nil
}

// lastUsedResolution is how stale last_used_at may get before a resolve
// writes it again. Without it every service call would write a row.
const lastUsedResolution = "1 minute"

// ResolveServiceToken finds the token whose value is token and its site. An
// unknown, revoked or expired token gives ErrTokenInvalid (the same error:
// a caller is told no more about an expired token than a revoked one); a token of a disabled site
// gives ErrSiteDisabled. It records the use in last_used_at, at most once per
// minute per token, in the same statement as the lookup.
func (s *Store) ResolveServiceToken(ctx context.Context, token string) (ServiceToken, Site, error) {
	if len(token) > maxServiceTokenLength || !strings.HasPrefix(token, ServiceTokenPrefix+"_") {
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token: %w", ErrTokenInvalid)
	}
	hash := secrets.HashToken(token)
	// The UPDATE's own conditions are on the target row (t), so Postgres
	// re-checks them if a concurrent resolve wrote the row first: two
	// replicas racing still write once. The outer SELECT sees the snapshot
	// from before the UPDATE, so the new time comes from touched.
	row := s.pool.QueryRow(ctx, `
		WITH tok AS (
			SELECT `+serviceTokenColumns+` FROM service_tokens WHERE token_hash = $1
		), touched AS (
			UPDATE service_tokens t SET last_used_at = now()
			FROM tok JOIN sites s ON s.id = tok.site_id
			WHERE t.id = tok.id AND NOT t.revoked AND s.status = 'active'
			  AND (t.expires_at IS NULL OR t.expires_at > now())
			  AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '`+lastUsedResolution+`')
			RETURNING t.last_used_at
		)
		SELECT tok.id, tok.site_id, tok.name, tok.prefix, tok.created_at,
		       coalesce((SELECT last_used_at FROM touched), tok.last_used_at),
		       tok.revoked, tok.revoked_at, tok.expires_at,
		       (tok.expires_at IS NOT NULL AND tok.expires_at <= now()),
		       s.id, s.slug, s.kind, s.base_url, s.display_name, s.settings, s.identity_key, s.status, s.shared_callback, s.created_at, s.updated_at
		FROM tok JOIN sites s ON s.id = tok.site_id`,
		hash[:])
	var (
		st       ServiceToken
		site     Site
		settings []byte
		status   string
	)
	err := row.Scan(&st.ID, &st.SiteID, &st.Name, &st.Prefix, &st.CreatedAt, &st.LastUsedAt, &st.Revoked, &st.RevokedAt, &st.ExpiresAt, &st.Expired,
		&site.ID, &site.Slug, &site.Kind, &site.BaseURL, &site.DisplayName, &settings, &site.IdentityKey, &status, &site.SharedCallback, &site.CreatedAt, &site.UpdatedAt)
	switch {
	case database.IsNoRows(err):
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token: %w", ErrTokenInvalid)
	case err != nil:
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token: %w", database.Classify(err))
	case st.Revoked:
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token %s: %w", st.ID, ErrTokenInvalid)
	case st.Expired:
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token %s: expired: %w", st.ID, ErrTokenInvalid)
	}
	site.Settings = settings
	site.Status = Status(status)
	if site.Status != StatusActive {
		return ServiceToken{}, Site{}, fmt.Errorf("sites: resolve service token %s: site %s: %w", st.ID, site.Slug, ErrSiteDisabled)
	}
	return st, site, nil
}

// scanServiceToken reads one row of serviceTokenColumns.
func scanServiceToken(row pgx.Row) (ServiceToken, error) {
	var st ServiceToken
	err := row.Scan(&st.ID, &st.SiteID, &st.Name, &st.Prefix, &st.CreatedAt, &st.LastUsedAt, &st.Revoked, &st.RevokedAt, &st.ExpiresAt, &st.Expired)
	return st, err
}
