package sites

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/database"
)

// Person is one ERP user who has connected to a site through erpgate's
// OAuth server, with the MCP clients they use.
type Person struct {
	ERPUser     string
	DisplayName string
	FirstUsedAt time.Time
	LastUsedAt  time.Time
	Clients     []PersonClient
}

// PersonClient is one MCP client a person consented to or holds tokens
// for. FirstUsedAt is the consent (or the first token); LastUsedAt is when
// the client last received a token.
type PersonClient struct {
	ClientID    string
	ClientName  string
	FirstUsedAt time.Time
	LastUsedAt  time.Time
}

// ListPeople returns who has connected to the site: every ERP user with a
// consent, a live OAuth token or a stored ERP token there, ordered by ERP
// user. It reads the authorization server's tables (oauth_consents,
// oauth_tokens, oauth_clients, upstream_tokens) by SQL; platform does not
// import authserver.
func (s *Store) ListPeople(ctx context.Context, siteID uuid.UUID) ([]Person, error) {
	rows, err := s.pool.Query(ctx, `
		WITH uses AS (
			SELECT erp_user, client_id, granted_at AS first_at, granted_at AS last_at
			FROM oauth_consents WHERE site_id = $1
			UNION ALL
			SELECT subject, client_id, min(coalesce(requested_at, created_at)), max(created_at)
			FROM oauth_tokens WHERE site_id = $1 AND subject <> '' AND kind IN ('access', 'refresh')
			GROUP BY subject, client_id
			UNION ALL
			SELECT erp_user, '', created_at, updated_at FROM upstream_tokens WHERE site_id = $1
		)
		SELECT u.erp_user, coalesce(max(ut.display_name), ''), u.client_id, coalesce(max(c.name), ''),
		       min(u.first_at), max(u.last_at)
		FROM uses u
		LEFT JOIN upstream_tokens ut ON ut.site_id = $1 AND ut.erp_user = u.erp_user
		LEFT JOIN oauth_clients c ON c.id = u.client_id
		GROUP BY u.erp_user, u.client_id
		ORDER BY u.erp_user, u.client_id`, siteID)
	if err != nil {
		return nil, fmt.Errorf("sites: list people of site %s: %w", siteID, database.Classify(err))
	}
	type use struct {
		user, name, client, clientName string
		first, last                    time.Time
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (use, error) {
		var u use
		err := r.Scan(&u.user, &u.name, &u.client, &u.clientName, &u.first, &u.last)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("sites: list people of site %s: %w", siteID, database.Classify(err))
	}
	var people []Person
	for _, u := range list {
		if len(people) == 0 || people[len(people)-1].ERPUser != u.user {
			people = append(people, Person{ERPUser: u.user, DisplayName: u.name, FirstUsedAt: u.first, LastUsedAt: u.last, Clients: []PersonClient{}})
		}
		p := &people[len(people)-1]
		if u.first.Before(p.FirstUsedAt) {
			p.FirstUsedAt = u.first
		}
		if u.last.After(p.LastUsedAt) {
			p.LastUsedAt = u.last
		}
		if u.client != "" {
			p.Clients = append(p.Clients, PersonClient{ClientID: u.client, ClientName: u.clientName, FirstUsedAt: u.first, LastUsedAt: u.last})
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
