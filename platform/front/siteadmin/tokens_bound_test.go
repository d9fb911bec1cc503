package siteadmin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Attacker's test: a site's owner, on the owner's page, issues far more
// service tokens than any site uses (each is a caller with budgets of its
// own at the MCP doors and an entry in every replica's cache). The first
// 100 are issued; the rest are refused as a conflict, in a sentence the
// owner can act on, and audited as refusals; nothing more is stored.
func TestOwnerIssuesNoMoreThanTheBoundOfServiceTokens(t *testing.T) {
	const bound, tries = 100, 130
	f := newFixture(t)
	site := f.create(t, "acme")
	ctx := t.Context()
	if _, err := f.svc.PutAPIConnection(ctx, siteadmin.Operator, site, map[string]string{"api_key": goodKey, "api_secret": goodSecret}); err != nil {
		t.Fatal(err)
	}
	owner := siteadmin.ERPAdmin(identity)
	var refusals []error
	for range tries {
		if _, _, err := f.svc.IssueServiceToken(ctx, owner, site, "bot", 30); err != nil {
			refusals = append(refusals, err)
		}
	}
	if n := count(t, f.pool, `SELECT count(*) FROM service_tokens WHERE NOT revoked`); n != bound {
		t.Fatalf("the owner holds %d active tokens after %d issues, want %d", n, tries, bound)
	}
	if len(refusals) != tries-bound {
		t.Fatalf("%d issues refused, want %d", len(refusals), tries-bound)
	}
	err := refusals[0]
	var se *siteadmin.Error
	if !errors.As(err, &se) || se.Kind != siteadmin.Conflict || !errors.Is(err, sites.ErrTooManyServiceTokens) {
		t.Fatalf("refusal = %v, want a Conflict matching ErrTooManyServiceTokens", err)
	}
	const sentence = "This site already has 100 active service tokens; revoke one you no longer use first."
	if got := se.PeopleSentence(nil); got != sentence {
		t.Errorf("the owner is told %q, want %q", got, sentence)
	}
	if !strings.Contains(se.Message, "100 active service tokens and a site may have at most 100") || !strings.Contains(se.Message, "ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE") {
		t.Errorf("the operator is told %q, which does not name the bound and its setting", se.Message)
	}
	if n := count(t, f.pool, `SELECT count(*) FROM admin_events WHERE action = 'issue_service_token' AND outcome = 'refused'
		AND actor_kind = 'erp_admin' AND sentence = $1`, sentence); n != tries-bound {
		t.Errorf("%d refusals audited with the sentence, want %d", n, tries-bound)
	}
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
