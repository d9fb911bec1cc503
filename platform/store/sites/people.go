package sites

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Person is one ERP user who has connected to a site through erpgate's
// OAuth server, with the MCP clients they use.
type Person struct {
	ERPUser     string
	DisplayName string
	FirstUsedAt time.Time
	LastUsedAt  time.Time
	// ERPToken says whether erpgate holds the person's ERP tokens for the
	// site, and ERPTokenExpiresAt when the access token among them expires
	// (erpgate renews it with the refresh token).
	ERPToken          bool
	ERPTokenExpiresAt time.Time
	Clients           []PersonClient
}

// PersonClient is one MCP client a person consented to or holds tokens
// for. FirstUsedAt is the consent (or the first token); LastUsedAt is when
// the client last received a token.
type PersonClient struct {
	ClientID    string
	ClientName  string
	FirstUsedAt time.Time
	LastUsedAt  time.Time
	// ConsentedAt is when the person consented to this client on the site;
	// zero when there is no consent (it was revoked, or tokens outlived it).
	ConsentedAt time.Time
	// LiveGrants counts the client's access and refresh tokens for the
	// person that are active and not expired, GrantedScopes are their
	// scopes, and GrantsExpireAt is when the last of them expires (zero
	// when one never does or there are none).
	LiveGrants     int
	GrantedScopes  []string
	GrantsExpireAt time.Time
	// RedirectURIs are the client's registered redirect URIs (none for a
	// client known only by its tokens).
	RedirectURIs []string
}

// ListPeople returns who has connected to the site: every ERP user with a
// consent, an OAuth token or a stored ERP token there, ordered by ERP
// user, each with their MCP clients, consents and live grants. It reads
// the authorization server's tables (oauth_consents, oauth_tokens,
// oauth_clients, upstream_tokens) by SQL; platform does not import
// authserver.
func (s *Store) ListPeople(ctx context.Context, siteID uuid.UUID) ([]Person, error) {
	rows, err := s.pool.Query(ctx, `
		WITH tokens AS (
			SELECT subject AS erp_user, client_id, coalesce(requested_at, created_at) AS first_at, created_at,
			       expires_at, granted_scopes, active AND (expires_at IS NULL OR expires_at > now()) AS live
			FROM oauth_tokens WHERE site_id = $1 AND subject <> '' AND kind IN ('access', 'refresh')
		), uses AS (
			SELECT erp_user, client_id, granted_at AS first_at, granted_at AS last_at, granted_at AS consented_at,
			       0 AS live, NULL::timestamptz AS live_until, false AS endless
			FROM oauth_consents WHERE site_id = $1
			UNION ALL
			SELECT erp_user, client_id, min(first_at), max(created_at), NULL,
			       count(*) FILTER (WHERE live), max(expires_at) FILTER (WHERE live),
			       coalesce(bool_or(live AND expires_at IS NULL), false)
			FROM tokens GROUP BY erp_user, client_id
			UNION ALL
			SELECT erp_user, '', created_at, updated_at, NULL, 0, NULL, false FROM upstream_tokens WHERE site_id = $1
		)
		SELECT u.erp_user, coalesce(max(ut.display_name), ''), bool_or(ut.erp_user IS NOT NULL), max(ut.expires_at),
		       u.client_id, coalesce(max(c.name), ''), min(u.first_at), max(u.last_at), max(u.consented_at),
		       sum(u.live)::int, CASE WHEN bool_or(u.endless) THEN NULL ELSE max(u.live_until) END,
		       coalesce((SELECT array_agg(DISTINCT sc ORDER BY sc) FROM tokens t, unnest(t.granted_scopes) sc
		                  WHERE t.live AND t.erp_user = u.erp_user AND t.client_id = u.client_id), '{}'),
		       coalesce(max(c.redirect_uris), '{}')
		FROM uses u
		LEFT JOIN upstream_tokens ut ON ut.site_id = $1 AND ut.erp_user = u.erp_user
		LEFT JOIN oauth_clients c ON c.id = u.client_id
		GROUP BY u.erp_user, u.client_id
		ORDER BY u.erp_user, u.client_id`, siteID)
	if err != nil {
		return nil, fmt.Errorf("sites: list people of site %s: %w", siteID, database.Classify(err))
	}
	type use struct {
		user, name        string
		erpToken          bool
		erpExpires        *time.Time
		client            PersonClient
		consented, expire *time.Time
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (use, error) {
		var u use
		err := r.Scan(&u.user, &u.name, &u.erpToken, &u.erpExpires, &u.client.ClientID, &u.client.ClientName,
			&u.client.FirstUsedAt, &u.client.LastUsedAt, &u.consented, &u.client.LiveGrants, &u.expire,
			&u.client.GrantedScopes, &u.client.RedirectURIs)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("sites: list people of site %s: %w", siteID, database.Classify(err))
	}
	var people []Person
	for _, u := range list {
		if len(people) == 0 || people[len(people)-1].ERPUser != u.user {
			p := Person{ERPUser: u.user, DisplayName: u.name, ERPToken: u.erpToken,
				FirstUsedAt: u.client.FirstUsedAt, LastUsedAt: u.client.LastUsedAt, Clients: []PersonClient{}}
			if u.erpExpires != nil {
				p.ERPTokenExpiresAt = u.erpExpires.UTC()
			}
			people = append(people, p)
		}
		p := &people[len(people)-1]
		if u.client.FirstUsedAt.Before(p.FirstUsedAt) {
			p.FirstUsedAt = u.client.FirstUsedAt
		}
		if u.client.LastUsedAt.After(p.LastUsedAt) {
			p.LastUsedAt = u.client.LastUsedAt
		}
		if u.client.ClientID != "" {
			if u.consented != nil {
				u.client.ConsentedAt = u.consented.UTC()
			}
			if u.expire != nil && u.client.LiveGrants > 0 {
				u.client.GrantsExpireAt = u.expire.UTC()
			}
			p.Clients = append(p.Clients, u.client)
		}
	}
	return people, nil
}

// RevokePerson ends everything erpgate holds for erpUser on the site: their
// OAuth codes and tokens (so their MCP clients get 401 at once and must
// sign in again), their consents and their stored ERP tokens, in one
// transaction. It reports ErrNotFound when the user has nothing there.
func (s *Store) RevokePerson(ctx context.Context, siteID uuid.UUID, erpUser string) error {
	var removed int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range []string{
			`DELETE FROM oauth_tokens WHERE site_id = $1 AND subject = $2`,
			`DELETE FROM oauth_consents WHERE site_id = $1 AND erp_user = $2`,
			`DELETE FROM upstream_tokens WHERE site_id = $1 AND erp_user = $2`,
		} {
			tag, err := tx.Exec(ctx, q, siteID, erpUser)
			if err != nil {
				return err
			}
			removed += tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sites: revoke a person's grants on site %s: %w", siteID, database.Classify(err))
	}
	if removed == 0 {
		return fmt.Errorf("sites: revoke a person's grants on site %s: %w", siteID, ErrNotFound)
	}
	s.notifyChanged(siteID)
	return nil
}

// ClientName returns the name an MCP client registered with erpgate's
// OAuth server under (its own words, as the consent page shows them), or
// "" when there is no such client or it gave none. Clients are not a
// site's: one client may connect to many sites.
func (s *Store) ClientName(ctx context.Context, clientID string) (string, error) {
	var name string
	err := s.pool.QueryRow(ctx, `SELECT coalesce(name, '') FROM oauth_clients WHERE id = $1`, clientID).Scan(&name)
	if database.IsNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sites: client name: %w", database.Classify(err))
	}
	return name, nil
}
