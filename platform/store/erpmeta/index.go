package erpmeta

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/database"
)

// index is one site's rows of schema_index. Ranking is PostgreSQL's
// full-text search: the 'english' configuration (so "invoices" finds
// "Invoice"), prefix matching, keywords weighted above title above body.
type index struct {
	pool *pgxpool.Pool
	site uuid.UUID
}

func (x *index) Status(ctx context.Context) (connector.IndexStatus, error) {
	var st connector.IndexStatus
	var live bool
	err := x.pool.QueryRow(ctx,
		`SELECT version, documents, built_at, expires_at > now() FROM schema_index_builds WHERE site_id = $1`,
		x.site).Scan(&st.Version, &st.Documents, &st.BuiltAt, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return connector.IndexStatus{}, nil
	}
	if err != nil {
		return connector.IndexStatus{}, fmt.Errorf("erpmeta: index status of site %s: %w", x.site, database.Classify(err))
	}
	st.Built = live
	return st, nil
}

func (x *index) Replace(ctx context.Context, version string, docs []connector.IndexDocument, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("erpmeta: index of site %s: ttl must be positive", x.site)
	}
	seen := make(map[[2]string]bool, len(docs))
	rows := make([][]any, 0, len(docs))
	for i, d := range docs {
		if d.Kind == "" || d.Name == "" {
			return fmt.Errorf("erpmeta: index of site %s: document %d has no kind or name", x.site, i)
		}
		k := [2]string{d.Kind, d.Name}
		if seen[k] {
			return fmt.Errorf("erpmeta: index of site %s: duplicate document %s %q", x.site, d.Kind, d.Name)
		}
		seen[k] = true
		var data any
		if len(d.Data) > 0 {
			data = string(d.Data)
		}
		rows = append(rows, []any{x.site, d.Kind, d.Name, clean(d.Title), clean(d.Keywords), clean(d.Body), data})
	}
	err := pgx.BeginFunc(ctx, x.pool, func(tx pgx.Tx) error {
		// The build row is locked first, so two replicas rebuilding the same
		// site's index take turns instead of interleaving their rows.
		if _, err := tx.Exec(ctx, `
			INSERT INTO schema_index_builds (site_id, version, documents, built_at, expires_at)
			VALUES ($1, $2, $3, now(), now() + make_interval(secs => $4))
			ON CONFLICT (site_id) DO UPDATE SET version = excluded.version, documents = excluded.documents,
				built_at = excluded.built_at, expires_at = excluded.expires_at`,
			x.site, version, len(docs), ttl.Seconds()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM schema_index WHERE site_id = $1`, x.site); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"schema_index"},
			[]string{"site_id", "kind", "name", "title", "keywords", "body", "data"}, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return fmt.Errorf("erpmeta: replace index of site %s: %w", x.site, database.Classify(err))
	}
	return nil
}

// clean removes NUL bytes, which PostgreSQL text cannot hold.
func clean(s string) string { return strings.ReplaceAll(s, "\x00", "") }

func (x *index) Search(ctx context.Context, query string, kinds []string, limit int) ([]connector.IndexHit, error) {
	terms := connector.SearchTerms(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	// Terms are letters and digits only, so they are safe inside a tsquery;
	// each matches as a prefix (":*") after stemming.
	prefixed := make([]string, len(terms))
	for i, t := range terms {
		prefixed[i] = t + ":*"
	}
	anyQ, allQ := strings.Join(prefixed, " | "), strings.Join(prefixed, " & ")
	if kinds == nil {
		kinds = []string{}
	}
	rows, err := x.pool.Query(ctx, `
		WITH q AS (SELECT to_tsquery('english', $2) AS any_q, to_tsquery('english', $3) AS all_q)
		SELECT kind, name, title, keywords, body, coalesce(data::text, ''), ts_rank(search, q.any_q), search @@ q.all_q
		FROM schema_index, q
		WHERE site_id = $1 AND search @@ q.any_q AND (cardinality($4::text[]) = 0 OR kind = ANY($4))
		ORDER BY 8 DESC, 7 DESC, kind, name
		LIMIT $5`, x.site, anyQ, allQ, kinds, limit)
	if err != nil {
		return nil, fmt.Errorf("erpmeta: search index of site %s: %w", x.site, database.Classify(err))
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (connector.IndexHit, error) {
		var h connector.IndexHit
		var data string
		var rank float32
		if err := r.Scan(&h.Document.Kind, &h.Document.Name, &h.Document.Title, &h.Document.Keywords, &h.Document.Body, &data, &rank, &h.AllTerms); err != nil {
			return h, err
		}
		h.Rank = float64(rank)
		if data != "" {
			h.Document.Data = []byte(data)
		}
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("erpmeta: search index of site %s: %w", x.site, database.Classify(err))
	}
	return hits, nil
}

func (x *index) Document(ctx context.Context, kind, name string) (connector.IndexDocument, bool, error) {
	if strings.ContainsRune(kind, 0) || !utf8.ValidString(kind+name) {
		// PostgreSQL text cannot hold NUL or bytes that are not UTF-8,
		// so no document has them; sent as a parameter they are an
		// error, not a miss. A NUL in the name is dropped below, as it
		// is from the names stored.
		return connector.IndexDocument{}, false, nil
	}
	d := connector.IndexDocument{Kind: kind}
	name = clean(name)
	var data string
	err := x.pool.QueryRow(ctx, `
		SELECT name, title, keywords, body, coalesce(data::text, '') FROM schema_index
		WHERE site_id = $1 AND kind = $2 AND lower(name) = lower($3)
		ORDER BY name = $3 DESC, name LIMIT 1`, x.site, kind, name).
		Scan(&d.Name, &d.Title, &d.Keywords, &d.Body, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return connector.IndexDocument{}, false, nil
	}
	if err != nil {
		return connector.IndexDocument{}, false, fmt.Errorf("erpmeta: read index document of site %s: %w", x.site, database.Classify(err))
	}
	if data != "" {
		d.Data = []byte(data)
	}
	return d, true, nil
}

func (x *index) Documents(ctx context.Context, kind, prefix string, limit int) ([]connector.IndexDocument, error) {
	if limit <= 0 || strings.ContainsRune(kind, 0) || !utf8.ValidString(kind+prefix) {
		return nil, nil // no document has such a kind or name (see Document)
	}
	rows, err := x.pool.Query(ctx, `
		SELECT name, title, keywords, body, coalesce(data::text, '') FROM schema_index
		WHERE site_id = $1 AND kind = $2 AND lower(name) LIKE $3 ESCAPE '\'
		ORDER BY name LIMIT $4`, x.site, kind, likePrefix(prefix), limit)
	if err != nil {
		return nil, fmt.Errorf("erpmeta: list index documents of site %s: %w", x.site, database.Classify(err))
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (connector.IndexDocument, error) {
		d := connector.IndexDocument{Kind: kind}
		var data string
		if err := r.Scan(&d.Name, &d.Title, &d.Keywords, &d.Body, &data); err != nil {
			return d, err
		}
		if data != "" {
			d.Data = []byte(data)
		}
		return d, nil
	})
	if err != nil {
		return nil, fmt.Errorf("erpmeta: list index documents of site %s: %w", x.site, database.Classify(err))
	}
	return docs, nil
}

// likePrefix turns a literal prefix into a LIKE pattern: % and _ in the
// prefix match only themselves.
func likePrefix(prefix string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(strings.ToLower(clean(prefix))) + "%"
}

func (x *index) Clear(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, x.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM schema_index_builds WHERE site_id = $1`, x.site); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM schema_index WHERE site_id = $1`, x.site)
		return err
	})
	if err != nil {
		return fmt.Errorf("erpmeta: clear index of site %s: %w", x.site, database.Classify(err))
	}
	return nil
}
