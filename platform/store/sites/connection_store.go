package sites

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// sealedField is one credential field ready to store.
type sealedField struct {
	name       string
	keyID      string
	ciphertext []byte
}

// PutConnection adds the site's connection of type typ, or replaces it and
// all its fields, in one transaction. Each field is sealed separately under
// the keyring's primary key. It reports ErrNotFound when the site does not
// exist and ErrInvalid for a bad type, field name or empty value.
//
// A caller that verified the credential against the ERP should use
// PutVerifiedConnection, which also makes sure the site has not moved to
// another origin since.
func (s *Store) PutConnection(ctx context.Context, siteID uuid.UUID, typ ConnectionType, verifiedIdentity string, fields map[string]secrets.Secret) (Connection, error) {
	return s.putConnectionChecked(ctx, ByOperator, siteID, "", typ, verifiedIdentity, fields)
}

// PutConnectionBy is PutConnection made by party by: the owner's
// (ByOwner) saves nothing and reports ErrOperatorDisabled on a site the
// operator disabled, checked under the site row's lock, so a disable
// made after the owner's request loaded the site still holds.
func (s *Store) PutConnectionBy(ctx context.Context, by Party, siteID uuid.UUID, typ ConnectionType, verifiedIdentity string, fields map[string]secrets.Secret) (Connection, error) {
	return s.putConnectionChecked(ctx, by, siteID, "", typ, verifiedIdentity, fields)
}

// PutVerifiedConnection is PutConnection for a credential that was verified
// against the ERP at verifiedBaseURL. If the site's base URL is no longer
// verifiedBaseURL it saves nothing and reports ErrBaseURLChanged, so a
// credential is never attached to an origin it was not verified against.
func (s *Store) PutVerifiedConnection(ctx context.Context, siteID uuid.UUID, verifiedBaseURL string, typ ConnectionType, verifiedIdentity string, fields map[string]secrets.Secret) (Connection, error) {
	return s.PutVerifiedConnectionBy(ctx, ByOperator, siteID, verifiedBaseURL, typ, verifiedIdentity, fields)
}

// PutVerifiedConnectionBy is PutVerifiedConnection made by party by, which
// PutConnectionBy explains: the owner's is refused ErrOperatorDisabled on
// a site the operator disabled, however long the verification took.
func (s *Store) PutVerifiedConnectionBy(ctx context.Context, by Party, siteID uuid.UUID, verifiedBaseURL string, typ ConnectionType, verifiedIdentity string, fields map[string]secrets.Secret) (Connection, error) {
	if verifiedBaseURL == "" {
		return Connection{}, fmt.Errorf("sites: put %s connection of site %s: %w", typ, siteID, invalidf("the verified base URL is empty"))
	}
	return s.putConnectionChecked(ctx, by, siteID, verifiedBaseURL, typ, verifiedIdentity, fields)
}

// putConnectionChecked seals the fields and stores them. An empty
// verifiedBaseURL skips the origin check.
func (s *Store) putConnectionChecked(ctx context.Context, by Party, siteID uuid.UUID, verifiedBaseURL string, typ ConnectionType, verifiedIdentity string, fields map[string]secrets.Secret) (Connection, error) {
	sealed, err := s.sealFields(siteID, typ, fields)
	if err != nil {
		return Connection{}, fmt.Errorf("sites: put %s connection of site %s: %w", typ, siteID, err)
	}
	conn, err := s.putConnection(ctx, by, siteID, verifiedBaseURL, typ, verifiedIdentity, sealed)
	if err != nil {
		return Connection{}, fmt.Errorf("sites: put %s connection of site %s: %w", typ, siteID, database.Classify(err))
	}
	s.notifyChanged(siteID)
	return conn, nil
}

func (s *Store) sealFields(siteID uuid.UUID, typ ConnectionType, fields map[string]secrets.Secret) ([]sealedField, error) {
	if !typ.Valid() {
		return nil, invalidf("connection type %q is not valid", typ)
	}
	if len(fields) == 0 {
		return nil, invalidf("a connection needs at least one credential field")
	}
	names := make([]string, 0, len(fields))
	for name, value := range fields {
		switch {
		case !fieldNamePattern.MatchString(name):
			return nil, invalidf("credential field name %q is not valid", name)
		case !value.IsSet():
			return nil, invalidf("credential field %s is empty", name)
		case len(value.Reveal()) > maxFieldBytes:
			return nil, invalidf("credential field %s is longer than %d bytes", name, maxFieldBytes)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	sealed := make([]sealedField, 0, len(names))
	for _, name := range names {
		keyID, ciphertext, err := s.keys.Seal([]byte(fields[name].Reveal()), credentialAD(siteID, typ, name))
		if err != nil {
			return nil, fmt.Errorf("seal field %s: %w", name, err)
		}
		sealed = append(sealed, sealedField{name: name, keyID: keyID, ciphertext: ciphertext})
	}
	return sealed, nil
}

func (s *Store) putConnection(ctx context.Context, by Party, siteID uuid.UUID, verifiedBaseURL string, typ ConnectionType, verifiedIdentity string, sealed []sealedField) (Connection, error) {
	var conn Connection
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		conn, err = putConnectionTx(ctx, tx, by, siteID, verifiedBaseURL, typ, verifiedIdentity, sealed)
		return err
	})
	if err != nil {
		return Connection{}, err
	}
	return conn, nil
}

// putConnectionTx stores the connection in tx, as putConnection.
func putConnectionTx(ctx context.Context, tx pgx.Tx, by Party, siteID uuid.UUID, verifiedBaseURL string, typ ConnectionType, verifiedIdentity string, sealed []sealedField) (Connection, error) {
	newID, err := uuid.NewV7()
	if err != nil {
		return Connection{}, fmt.Errorf("new id: %w", err)
	}
	conn := Connection{SiteID: siteID, Type: typ, VerifiedIdentity: verifiedIdentity}
	// Holding the site row FOR SHARE keeps a concurrent DeleteSite, or an
	// UpdateSite moving the site to another origin, from racing the writes
	// below; it also tells a missing site from a database error. The
	// operator's disable waits for it too, or it sees the disable.
	var baseURL, disabledBy string
	if err := tx.QueryRow(ctx, `SELECT base_url, coalesce(disabled_by, '') FROM sites WHERE id = $1 FOR SHARE`, siteID).Scan(&baseURL, &disabledBy); err != nil {
		return Connection{}, notFound(err)
	}
	if by == ByOwner && Party(disabledBy) == ByOperator {
		return Connection{}, ErrOperatorDisabled
	}
	if verifiedBaseURL != "" && baseURL != verifiedBaseURL {
		return Connection{}, ErrBaseURLChanged
	}
	if err := tx.QueryRow(ctx, `
		INSERT INTO connections (id, site_id, type, verified_identity)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (site_id, type) DO UPDATE
			SET verified_identity = excluded.verified_identity, updated_at = now()
		RETURNING id, created_at, updated_at`,
		newID, siteID, string(typ), verifiedIdentity).Scan(&conn.ID, &conn.CreatedAt, &conn.UpdatedAt); err != nil {
		return Connection{}, fmt.Errorf("upsert connection: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM credentials WHERE site_id = $1 AND connection_id = $2`, siteID, conn.ID); err != nil {
		return Connection{}, fmt.Errorf("delete old fields: %w", err)
	}
	for _, f := range sealed {
		if _, err := tx.Exec(ctx, `
			INSERT INTO credentials (site_id, connection_id, field, key_id, ciphertext)
			VALUES ($1, $2, $3, $4, $5)`,
			siteID, conn.ID, f.name, f.keyID, f.ciphertext); err != nil {
			return Connection{}, fmt.Errorf("insert field %s: %w", f.name, err)
		}
		conn.Fields = append(conn.Fields, f.name)
	}
	return conn, nil
}

// PutVerifiedAPIConnectionWithTokenBy is PutVerifiedConnectionBy of the
// site's api_token connection and IssueServiceTokenBy of a token acting
// with it, in one transaction: both are stored or neither is. Each write
// checks what it checks alone, under the site row's lock (the operator's
// disable, for the owner's; the token bound), so a refusal of the token
// leaves the credential as it was.
func (s *Store) PutVerifiedAPIConnectionWithTokenBy(ctx context.Context, by Party, siteID uuid.UUID, verifiedBaseURL, verifiedIdentity string, fields map[string]secrets.Secret, name string, lifetimeDays int) (Connection, ServiceToken, secrets.Secret, error) {
	if verifiedBaseURL == "" {
		return Connection{}, ServiceToken{}, "", fmt.Errorf("sites: put api_token connection of site %s: %w", siteID, invalidf("the verified base URL is empty"))
	}
	sealed, err := s.sealFields(siteID, ConnectionAPIToken, fields)
	if err != nil {
		return Connection{}, ServiceToken{}, "", fmt.Errorf("sites: put api_token connection of site %s: %w", siteID, err)
	}
	issue, err := s.newServiceToken(siteID, name, lifetimeDays)
	if err != nil {
		return Connection{}, ServiceToken{}, "", err
	}
	var (
		conn Connection
		st   ServiceToken
	)
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The site's row is locked first as strongly as the token's write
		// locks it (FOR NO KEY UPDATE), before the credential's write
		// takes its FOR SHARE: two of these at once on one site, each
		// holding FOR SHARE and then asking for more, would wait for each
		// other, and PostgreSQL would end one as a deadlock.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM sites WHERE id = $1 FOR NO KEY UPDATE`, siteID); err != nil {
			return err
		}
		var err error
		if conn, err = putConnectionTx(ctx, tx, by, siteID, verifiedBaseURL, ConnectionAPIToken, verifiedIdentity, sealed); err != nil {
			return err
		}
		st, err = s.issueServiceTokenTx(ctx, tx, by, siteID, issue)
		return err
	})
	if err != nil {
		return Connection{}, ServiceToken{}, "", fmt.Errorf("sites: put api_token connection and issue a service token for site %s: %w", siteID, database.Classify(err))
	}
	s.notifyChanged(siteID)
	return conn, st, issue.token.Value, nil
}

// GetConnection returns the site's connection of type typ with its fields
// decrypted. It reports ErrNotFound when the site has no such connection
// (including when siteID names another tenant's site) and
// ErrCredentialUnreadable when a field cannot be decrypted.
func (s *Store) GetConnection(ctx context.Context, siteID uuid.UUID, typ ConnectionType) (Connection, map[string]secrets.Secret, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.verified_identity, c.created_at, c.updated_at, cr.field, cr.key_id, cr.ciphertext
		FROM connections c
		LEFT JOIN credentials cr ON cr.site_id = c.site_id AND cr.connection_id = c.id
		WHERE c.site_id = $1 AND c.type = $2
		ORDER BY cr.field`,
		siteID, string(typ))
	if err != nil {
		return Connection{}, nil, fmt.Errorf("sites: get %s connection of site %s: %w", typ, siteID, database.Classify(err))
	}
	defer rows.Close()
	conn := Connection{SiteID: siteID, Type: typ}
	fields := map[string]secrets.Secret{}
	found := false
	for rows.Next() {
		var (
			field, keyID *string
			ciphertext   []byte
		)
		if err := rows.Scan(&conn.ID, &conn.VerifiedIdentity, &conn.CreatedAt, &conn.UpdatedAt, &field, &keyID, &ciphertext); err != nil {
			return Connection{}, nil, fmt.Errorf("sites: get %s connection of site %s: %w", typ, siteID, database.Classify(err))
		}
		found = true
		if field == nil {
			continue
		}
		plaintext, err := s.keys.Open(*keyID, ciphertext, credentialAD(siteID, typ, *field))
		if err != nil {
			return Connection{}, nil, fmt.Errorf("sites: get %s connection of site %s: field %s: %w: %w", typ, siteID, *field, ErrCredentialUnreadable, err)
		}
		fields[*field] = secrets.Secret(plaintext)
		clear(plaintext)
		conn.Fields = append(conn.Fields, *field)
	}
	if err := rows.Err(); err != nil {
		return Connection{}, nil, fmt.Errorf("sites: get %s connection of site %s: %w", typ, siteID, database.Classify(err))
	}
	if !found {
		return Connection{}, nil, fmt.Errorf("sites: get %s connection of site %s: %w", typ, siteID, ErrNotFound)
	}
	return conn, fields, nil
}

// ListConnections returns the site's connections, without secrets, ordered
// by type. A site without connections (or an unknown site) gives none.
func (s *Store) ListConnections(ctx context.Context, siteID uuid.UUID) ([]Connection, error) {
	bySite, err := s.ListConnectionsOfSites(ctx, []uuid.UUID{siteID})
	if err != nil {
		return nil, err
	}
	return bySite[siteID], nil
}

// ListConnectionsOfSites returns the connections of each of siteIDs, keyed by
// site id, without secrets. It lets a listing of many sites avoid a query per
// site.
func (s *Store) ListConnectionsOfSites(ctx context.Context, siteIDs []uuid.UUID) (map[uuid.UUID][]Connection, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.site_id, c.type, c.verified_identity, c.created_at, c.updated_at,
		       coalesce(array_agg(cr.field ORDER BY cr.field) FILTER (WHERE cr.field IS NOT NULL), '{}')
		FROM connections c
		LEFT JOIN credentials cr ON cr.site_id = c.site_id AND cr.connection_id = c.id
		WHERE c.site_id = ANY($1)
		GROUP BY c.id
		ORDER BY c.site_id, c.type`,
		siteIDs)
	if err != nil {
		return nil, fmt.Errorf("sites: list connections: %w", database.Classify(err))
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Connection, error) {
		var (
			c   Connection
			typ string
		)
		err := r.Scan(&c.ID, &c.SiteID, &typ, &c.VerifiedIdentity, &c.CreatedAt, &c.UpdatedAt, &c.Fields)
		c.Type = ConnectionType(typ)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("sites: list connections: %w", database.Classify(err))
	}
	bySite := make(map[uuid.UUID][]Connection, len(siteIDs))
	for _, c := range list {
		bySite[c.SiteID] = append(bySite[c.SiteID], c)
	}
	return bySite, nil
}

// DeleteConnection removes the site's connection of type typ and its
// credentials. It reports ErrNotFound. Service tokens are kept: they fail at
// use until an api_token connection is added again.
func (s *Store) DeleteConnection(ctx context.Context, siteID uuid.UUID, typ ConnectionType) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM connections WHERE site_id = $1 AND type = $2`, siteID, string(typ))
	if err != nil {
		return fmt.Errorf("sites: delete %s connection of site %s: %w", typ, siteID, database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("sites: delete %s connection of site %s: %w", typ, siteID, ErrNotFound)
	}
	s.notifyChanged(siteID)
	return nil
}
