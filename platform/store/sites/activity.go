package sites

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// Activity is what the console shows of a site's use.
type Activity struct {
	// People is how many ERP users have connected (ListPeople's count).
	People int
	// Calls and Errors count the tool calls since the given time, and
	// those of them that failed.
	Calls, Errors int
}

// ActivityOf returns the activity of every site that has any: people
// connected, and tool calls and failed calls since since.
func (s *Store) ActivityOf(ctx context.Context, since time.Time) (map[uuid.UUID]Activity, error) {
	rows, err := s.pool.Query(ctx, `
		WITH people AS (
			SELECT site_id, count(DISTINCT erp_user) AS n FROM (
				SELECT site_id, erp_user FROM oauth_consents
				UNION SELECT site_id, subject FROM oauth_tokens WHERE subject <> '' AND kind IN ('access', 'refresh') AND site_id IS NOT NULL
				UNION SELECT site_id, erp_user FROM upstream_tokens) p
			GROUP BY site_id
		), calls AS (
			SELECT site_id, count(*) AS n, count(*) FILTER (WHERE outcome = 'error') AS errors
			  FROM usage_events WHERE occurred_at >= $1 AND method = 'tools/call' AND site_id IS NOT NULL
			 GROUP BY site_id
		)
		SELECT s.id, coalesce(p.n, 0), coalesce(c.n, 0), coalesce(c.errors, 0)
		  FROM sites s LEFT JOIN people p ON p.site_id = s.id LEFT JOIN calls c ON c.site_id = s.id`, since)
	if err != nil {
		return nil, fmt.Errorf("sites: activity: %w", database.Classify(err))
	}
	defer rows.Close()
	out := map[uuid.UUID]Activity{}
	for rows.Next() {
		var id uuid.UUID
		var a Activity
		if err := rows.Scan(&id, &a.People, &a.Calls, &a.Errors); err != nil {
			return nil, fmt.Errorf("sites: activity: %w", database.Classify(err))
		}
		out[id] = a
	}
	return out, database.Classify(rows.Err())
}
