package sites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// kindPattern matches the connector kinds the connector registry accepts.
var kindPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// siteColumns is the column list scanSite reads, in order.
const siteColumns = `id, slug, kind, base_url, display_name, settings, identity_key, status, coalesce(disabled_by, ''), shared_callback, created_at, updated_at`

// CreateSite registers a site. It refuses invalid input with ErrInvalid and
// a taken slug or base URL (with the same identity key) with ErrSlugTaken
// or ErrBaseURLTaken, both of which match ErrConflict.
func (s *Store) CreateSite(ctx context.Context, in NewSite) (Site, error) {
	if err := validateNewSite(in); err != nil {
		return Site{}, fmt.Errorf("sites: create %s: %w", in.Slug, err)
	}
	settings, err := settingsObject(in.Settings)
	if err != nil {
		return Site{}, fmt.Errorf("sites: create %s: %w", in.Slug, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Site{}, fmt.Errorf("sites: create %s: new id: %w", in.Slug, err)
	}
	row := s.pool.QueryRow(ctx, `
		INSERT INTO sites (id, slug, kind, base_url, display_name, settings, identity_key, status, shared_callback)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, 'active', $8)
		RETURNING `+siteColumns,
		id, in.Slug, in.Kind, in.BaseURL, in.DisplayName, string(settings), in.IdentityKey, in.SharedCallback)
	site, err := scanSite(row)
	if err != nil {
		return Site{}, fmt.Errorf("sites: create %s: %w", in.Slug, siteWriteError(err))
	}
	return site, nil
}

func validateNewSite(in NewSite) error {
	if err := ValidateSlug(in.Slug); err != nil {
		return err
	}
	if !kindPattern.MatchString(in.Kind) {
		return invalidf("kind %q is not a valid connector kind", in.Kind)
	}
	if err := ValidateDisplayName(in.DisplayName); err != nil {
		return err
	}
	if _, err := checkBaseURL(in.BaseURL); err != nil {
		return err
	}
	return nil
}

// ListSites returns every site, ordered by slug.
func (s *Store) ListSites(ctx context.Context) ([]Site, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+siteColumns+` FROM sites ORDER BY slug`)
	if err != nil {
		return nil, fmt.Errorf("sites: list: %w", database.Classify(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Site, error) { return scanSite(r) })
	if err != nil {
		return nil, fmt.Errorf("sites: list: %w", database.Classify(err))
	}
	return list, nil
}

// GetSite returns the site with id, or ErrNotFound.
func (s *Store) GetSite(ctx context.Context, id uuid.UUID) (Site, error) {
	site, err := scanSite(s.pool.QueryRow(ctx, `SELECT `+siteColumns+` FROM sites WHERE id = $1`, id))
	if err != nil {
		return Site{}, fmt.Errorf("sites: get %s: %w", id, notFound(err))
	}
	return site, nil
}

// GetSiteBySlug returns the site with slug, or ErrNotFound.
func (s *Store) GetSiteBySlug(ctx context.Context, slug string) (Site, error) {
	if !utf8.ValidString(slug) || strings.ContainsRune(slug, 0) {
		// No slug holds what PostgreSQL text cannot; sent, it would be
		// an error rather than a miss.
		return Site{}, fmt.Errorf("sites: get %q: %w", slug, ErrNotFound)
	}
	site, err := scanSite(s.pool.QueryRow(ctx, `SELECT `+siteColumns+` FROM sites WHERE slug = $1`, slug))
	if err != nil {
		return Site{}, fmt.Errorf("sites: get %s: %w", slug, notFound(err))
	}
	return site, nil
}

// UpdateSite applies upd to the site with id and returns the result. It
// reports ErrNotFound, ErrInvalid, ErrBaseURLTaken when the new base URL and
// identity key belong to another site, and ErrConnectionsExist when the base URL
// would change while the site has connections: their credentials were
// verified against the current origin and must never be sent to another.
// A move ends the site's sign-ins and the ERP tokens erpgate holds for it.
// It reports ErrOperatorDisabled when upd is the owner's and the operator
// disabled the site.
func (s *Store) UpdateSite(ctx context.Context, id uuid.UUID, upd SiteUpdate) (Site, error) {
	if err := validateUpdate(upd); err != nil {
		return Site{}, fmt.Errorf("sites: update %s: %w", id, err)
	}
	var settings *string
	if upd.Settings != nil {
		obj, err := settingsObject(upd.Settings)
		if err != nil {
			return Site{}, fmt.Errorf("sites: update %s: %w", id, err)
		}
		text := string(obj)
		settings = &text
	}
	if upd.DisplayName == nil && upd.BaseURL == nil && settings == nil && upd.IdentityKey == nil && upd.Status == nil && !upd.OwnCallback {
		return s.GetSite(ctx, id)
	}
	var site Site
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if upd.By == ByOwner {
			if err := checkOwnerMayChange(ctx, tx, id); err != nil {
				return err
			}
		}
		if upd.BaseURL != nil {
			if err := checkOriginChange(ctx, tx, id, *upd.BaseURL); err != nil {
				return err
			}
		}
		if upd.IdentityKey != nil {
			if err := checkTenantChange(ctx, tx, id, *upd.IdentityKey); err != nil {
				return err
			}
		}
		var err error
		site, err = scanSite(tx.QueryRow(ctx, `
			UPDATE sites SET
				display_name = coalesce($2, display_name),
				base_url     = coalesce($3, base_url),
				settings     = coalesce($4::jsonb, settings),
				status       = coalesce($5, status),
				disabled_by  = CASE WHEN $5::text IS NULL THEN disabled_by WHEN $5 = 'active' THEN NULL ELSE coalesce(nullif($8, ''), 'operator') END,
				identity_key = coalesce($6, identity_key),
				shared_callback = shared_callback AND NOT $7,
				updated_at   = now()
			WHERE id = $1
			RETURNING `+siteColumns,
			id, upd.DisplayName, upd.BaseURL, settings, (*string)(upd.Status), upd.IdentityKey, upd.OwnCallback, string(upd.By)))
		return err
	})
	if err != nil {
		return Site{}, fmt.Errorf("sites: update %s: %w", id, notFound(siteWriteError(err)))
	}
	s.notifyChanged(id)
	return site, nil
}

// checkOwnerMayChange refuses the owner's change of a site the operator
// disabled. The site row stays locked until the transaction ends, so the
// operator cannot disable it between this check and the UPDATE.
func checkOwnerMayChange(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	var by string
	if err := tx.QueryRow(ctx, `SELECT coalesce(disabled_by, '') FROM sites WHERE id = $1 FOR UPDATE`, id).Scan(&by); err != nil {
		return err
	}
	if Party(by) == ByOperator {
		return ErrOperatorDisabled
	}
	return nil
}

// checkOriginChange refuses to move a site with connections to another
// origin. The site row stays locked until the transaction ends, and
// PutConnection holds it FOR SHARE, so a connection cannot appear between
// this check and the UPDATE. The connections are counted in a statement of
// their own, after the lock, so they are read from a snapshot that includes
// any PutConnection the lock waited for.
func checkOriginChange(ctx context.Context, tx pgx.Tx, id uuid.UUID, baseURL string) error {
	var current string
	if err := tx.QueryRow(ctx, `SELECT base_url FROM sites WHERE id = $1 FOR UPDATE`, id).Scan(&current); err != nil {
		return err
	}
	if current == baseURL {
		return nil
	}
	var connected bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM connections WHERE site_id = $1)`, id).Scan(&connected); err != nil {
		return err
	}
	if connected {
		return ErrConnectionsExist
	}
	return endWhatTheOldERPIssued(ctx, tx, id)
}

// checkTenantChange refuses to move a site with an API credential to
// another tenant (its identity key changes): the credential is the old
// tenant's (an Acumatica client id is GUID@Tenant), and the new tenant's
// administrators, owners of the moved site, could issue service tokens
// that read the old tenant's data with it. A move it allows ends what
// the old tenant issued, as a move to another address does, and revokes
// the site's service tokens, which the old tenant's programs hold.
func checkTenantChange(ctx context.Context, tx pgx.Tx, id uuid.UUID, identityKey string) error {
	var current string
	if err := tx.QueryRow(ctx, `SELECT identity_key FROM sites WHERE id = $1 FOR UPDATE`, id).Scan(&current); err != nil {
		return err
	}
	if current == identityKey {
		return nil
	}
	var credential bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM connections WHERE site_id = $1 AND type = 'api_token')`, id).Scan(&credential); err != nil {
		return err
	}
	if credential {
		return ErrAPICredentialExists
	}
	// The service tokens were given to the old tenant's programs: kept,
	// they would act with the credential the new tenant's administrators
	// set next, reading the new tenant's data for another company.
	if _, err := tx.Exec(ctx, `UPDATE service_tokens SET revoked = true, revoked_at = coalesce(revoked_at, now())
		WHERE site_id = $1 AND NOT revoked`, id); err != nil {
		return fmt.Errorf("end the old tenant's service tokens: %w", err)
	}
	// The new tenant's administrators own the site from now on; their
	// page starts here (TenantSince).
	if _, err := tx.Exec(ctx, `UPDATE sites SET tenant_since = now() WHERE id = $1`, id); err != nil {
		return fmt.Errorf("mark the tenant move: %w", err)
	}
	return endWhatTheOldERPIssued(ctx, tx, id)
}

// endWhatTheOldERPIssued ends, for a site moved to another ERP or tenant,
// what erpgate holds from the old one (people's ERP tokens, also in
// sign-ins under way, and service connections') and its own grants that
// use them: none is sent to the new one, and people sign in again there.
// So do the ERP tokens kept for owner-page sessions, whose sessions the
// move ends (their scope names the old ERP and tenant).
// Their consents end too: the same ERP user id at the new one may be
// another person, who consents for themselves, and the new ERP's
// administrators are not shown the old one's people.
// (The authorization server's tables, by SQL: platform does not import
// it.) It also deletes the writes proposed or approved on the old ERP's
// preview: the same call proposes afresh where the site now is, rather
// than run there on an approval of what another ERP showed. Writes that
// began or ran keep their record.
func endWhatTheOldERPIssued(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	for _, table := range []string{"oauth_signin_flows", "upstream_tokens", "service_connection_tokens", "oauth_tokens", "oauth_consents", "owner_session_tokens"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE site_id = $1`, id); err != nil {
			return fmt.Errorf("end what the old ERP issued (%s): %w", table, err)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM pending_actions WHERE site_id = $1 AND status IN ('proposed', 'approved')`, id); err != nil {
		return fmt.Errorf("end the writes approved where the site was: %w", err)
	}
	return nil
}

func validateUpdate(upd SiteUpdate) error {
	if upd.DisplayName != nil {
		if err := ValidateDisplayName(*upd.DisplayName); err != nil {
			return err
		}
	}
	if upd.BaseURL != nil {
		if _, err := checkBaseURL(*upd.BaseURL); err != nil {
			return err
		}
	}
	if upd.Settings != nil && upd.IdentityKey == nil {
		return invalidf("new settings need their identity key")
	}
	if upd.Status != nil && !upd.Status.Valid() {
		return invalidf("status %q is not valid: use %q or %q", *upd.Status, StatusActive, StatusDisabled)
	}
	if upd.By != "" && upd.By != ByOperator && upd.By != ByOwner {
		return invalidf("party %q is not valid: use %q or %q", upd.By, ByOperator, ByOwner)
	}
	return nil
}

// DeleteSite removes the site with id. Its connections, credentials and
// service tokens go with it (ON DELETE CASCADE); usage events keep their
// slug but lose the reference. It reports ErrNotFound.
func (s *Store) DeleteSite(ctx context.Context, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("sites: delete %s: %w", id, database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("sites: delete %s: %w", id, ErrNotFound)
	}
	s.notifyChanged(id)
	return nil
}

// DeleteSiteByOwner is DeleteSite for the site's owner: it reports
// ErrOperatorDisabled, and deletes nothing, when the operator disabled the
// site, so that the owner cannot register its address again as a new,
// active site.
func (s *Store) DeleteSiteByOwner(ctx context.Context, id uuid.UUID) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := checkOwnerMayChange(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM sites WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sites: delete %s: %w", id, notFound(err))
	}
	s.notifyChanged(id)
	return nil
}

// scanSite reads one row of siteColumns.
func scanSite(row pgx.Row) (Site, error) {
	var (
		site       Site
		settings   []byte
		status     string
		disabledBy string
	)
	if err := row.Scan(&site.ID, &site.Slug, &site.Kind, &site.BaseURL, &site.DisplayName,
		&settings, &site.IdentityKey, &status, &disabledBy, &site.SharedCallback, &site.CreatedAt, &site.UpdatedAt); err != nil {
		return Site{}, err
	}
	site.Settings = json.RawMessage(settings)
	site.Status = Status(status)
	site.DisabledBy = Party(disabledBy)
	return site, nil
}

// settingsObject returns raw, or {} when raw is nil, after checking that it
// is one JSON object (the schema's sites_settings_check).
func settingsObject(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return json.RawMessage(`{}`), nil
	}
	trimmed := bytes.TrimSpace(raw)
	if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, invalidf("settings must be a JSON object")
	}
	return trimmed, nil
}

// siteWriteError turns the sites table's unique violations into ErrSlugTaken
// and ErrBaseURLTaken.
func siteWriteError(err error) error {
	constraint, ok := database.IsUniqueViolation(err)
	if !ok {
		return database.Classify(err)
	}
	switch constraint {
	case "sites_slug_key":
		return ErrSlugTaken
	case "sites_base_url_identity_key":
		return ErrBaseURLTaken
	}
	return fmt.Errorf("%w: %s", ErrConflict, constraint)
}

// notFound turns "no rows" into ErrNotFound and leaves other errors alone.
func notFound(err error) error {
	if database.IsNoRows(err) {
		return ErrNotFound
	}
	return database.Classify(err)
}
