package sites_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// TestMovingASiteEndsItsUndoneApprovals: a write approved at the ERP of the
// old address was approved on that ERP's preview. Once the site is moved,
// a retry of the same call (a service token's bot keeps its token through
// the move) must not claim it and run at the new address: the approvals
// not yet run end with the move, and the call proposes afresh there. The
// record of writes that ran stays.
func TestMovingASiteEndsItsUndoneApprovals(t *testing.T) {
	ctx := t.Context()
	s, pool := newStore(t)
	site := mustCreate(t, s, "moving")
	other := mustCreate(t, s, "staying")
	insert := func(siteID uuid.UUID, status string) uuid.UUID {
		t.Helper()
		id := uuid.New()
		now := time.Now()
		if _, err := pool.Exec(ctx, `
INSERT INTO pending_actions (id, site_id, site_slug, kind, auth_type, principal, tool, args_digest, approver, preview, status, created_at, expires_at)
VALUES ($1, $2, 'x', 'write', 'service_token', 'bot', 'create_sales_order', sha256($3::bytea), 'boss@example.com', '{}', $4, $5, $6)`,
			id, siteID, []byte(id.String()), status, now, now.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	proposed, approved, executed := insert(site.ID, "proposed"), insert(site.ID, "approved"), insert(site.ID, "executed")
	elsewhere := insert(other.ID, "approved")
	count := func(id uuid.UUID) int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pending_actions WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	name := "Renamed"
	if _, err := s.UpdateSite(ctx, site.ID, sites.SiteUpdate{DisplayName: &name}); err != nil {
		t.Fatal(err)
	}
	if count(proposed)+count(approved) != 2 {
		t.Fatal("a change that is not a move ended the site's approvals")
	}

	moved := "https://elsewhere.example.com"
	if _, err := s.UpdateSite(ctx, site.ID, sites.SiteUpdate{BaseURL: &moved}); err != nil {
		t.Fatal(err)
	}
	if n := count(proposed) + count(approved); n != 0 {
		t.Errorf("%d approvals given at the old address outlived the move", n)
	}
	if count(executed) != 1 {
		t.Error("the record of a write that ran was lost in the move")
	}
	if count(elsewhere) != 1 {
		t.Error("another site's approval ended with this site's move")
	}
}

// TestMovingASiteToAnotherTenantEndsItsUndoneApprovals: the same for a
// site moved to another tenant of the same ERP (its identity key changes):
// that tenant is another company's.
func TestMovingASiteToAnotherTenantEndsItsUndoneApprovals(t *testing.T) {
	ctx := t.Context()
	s, pool := newStore(t)
	site := mustCreate(t, s, "tenant-move")
	id := uuid.New()
	now := time.Now()
	if _, err := pool.Exec(ctx, `
INSERT INTO pending_actions (id, site_id, site_slug, kind, auth_type, principal, tool, args_digest, approver, preview, status, created_at, expires_at)
VALUES ($1, $2, 'x', 'write', 'service_token', 'bot', 'add_note', sha256('a'::bytea), 'boss@example.com', '{}', 'approved', $3, $4)`,
		id, site.ID, now, now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	same := site.IdentityKey
	if _, err := s.UpdateSite(ctx, site.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme"}`), IdentityKey: &same}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pending_actions WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("settings saved with the same identity ended the approval (%d rows, %v)", n, err)
	}
	other := same + "-other-tenant"
	if _, err := s.UpdateSite(ctx, site.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme","tenant":"Other"}`), IdentityKey: &other}); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pending_actions WHERE id = $1`, id).Scan(&n); err != nil || n != 0 {
		t.Errorf("an approval given at the old tenant outlived the move (%d rows, %v)", n, err)
	}
}

// TestTenantMoveWaitsForTheAPICredentialToGo: an API credential is the old
// tenant's (Acumatica's client id is GUID@Tenant). Kept through a move, it
// would let the new tenant's administrators, owners of the moved site,
// issue service tokens that read the old tenant's data. As for a move to
// another address, the move is refused until the credential is deleted;
// once made, it ends the people's ERP tokens and grants of the old tenant.
func TestTenantMoveWaitsForTheAPICredentialToGo(t *testing.T) {
	ctx := t.Context()
	s, pool := newStore(t)
	site := mustCreate(t, s, "tenant-cred")
	if _, err := s.PutConnection(ctx, site.ID, sites.ConnectionAPIToken, "bot@example.com", apiFields("k", "s")); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO upstream_tokens (site_id, erp_user, key_id, access_ciphertext, expires_at) VALUES ($1, 'alex', 'k1', '\x02', now())`, site.ID); err != nil {
		t.Fatal(err)
	}
	other := site.IdentityKey + "-other-tenant"
	move := sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme","tenant":"Other"}`), IdentityKey: &other}
	if _, err := s.UpdateSite(ctx, site.ID, move); !errors.Is(err, sites.ErrAPICredentialExists) {
		t.Fatalf("a move with the old tenant's API credential: %v, want ErrAPICredentialExists", err)
	}
	if err := s.DeleteConnection(ctx, site.ID, sites.ConnectionAPIToken); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSite(ctx, site.ID, move); err != nil {
		t.Fatalf("the move once the credential is gone: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM upstream_tokens WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d ERP tokens of the old tenant outlived the move (%v)", n, err)
	}
}

// TestMovingASiteEndsTheOldERPsConsents: a person's consent is given on
// the site's ERP as it was; after a move to another address or tenant,
// which is another company's, the same ERP user id may be another person.
// Kept, the consent let that person skip the consent page, and the new
// ERP's administrators saw the old one's people (ERP user ids, their AI
// clients) on the owner page. The move ends them with the ERP tokens and
// grants; another site's consents stay.
func TestMovingASiteEndsTheOldERPsConsents(t *testing.T) {
	ctx := t.Context()
	s, pool := newStore(t)
	byAddress, byTenant, other := mustCreate(t, s, "address-move"), mustCreate(t, s, "tenant-move"), mustCreate(t, s, "staying")
	if _, err := pool.Exec(ctx, `INSERT INTO oauth_clients (id, name, redirect_uris, grant_types, response_types, scope, token_endpoint_auth_method)
		VALUES ('c1', 'Client', '{https://client.example/cb}', '{authorization_code}', '{code}', 'mcp', 'none')`); err != nil {
		t.Fatal(err)
	}
	for _, site := range []sites.Site{byAddress, byTenant, other} {
		if _, err := pool.Exec(ctx, `INSERT INTO oauth_consents (site_id, erp_user, client_id) VALUES ($1, 'admin', 'c1')`, site.ID); err != nil {
			t.Fatal(err)
		}
	}
	moved := "https://elsewhere.example.com"
	if _, err := s.UpdateSite(ctx, byAddress.ID, sites.SiteUpdate{BaseURL: &moved}); err != nil {
		t.Fatal(err)
	}
	tenant := byTenant.IdentityKey + "-other-tenant"
	if _, err := s.UpdateSite(ctx, byTenant.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme","tenant":"Other"}`), IdentityKey: &tenant}); err != nil {
		t.Fatal(err)
	}
	for _, site := range []sites.Site{byAddress, byTenant} {
		people, err := s.ListPeople(ctx, site.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(people) != 0 {
			t.Errorf("site %s lists the old ERP's people after its move: %+v", site.Slug, people)
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM oauth_consents WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("site %s: %d consents of the old ERP outlived the move (%v)", site.Slug, n, err)
		}
	}
	if people, err := s.ListPeople(ctx, other.ID); err != nil || len(people) != 1 || people[0].ERPUser != "admin" {
		t.Errorf("another site's people after the moves: %+v, %v", people, err)
	}
}

// TestTenantMoveEndsTheOldTenantsServiceTokens: a service token was given
// to a program of the old tenant's company. The move waits for the old
// API credential to go; once the new tenant's administrators set theirs,
// a token kept through the move would read the new tenant's data for
// the old company's program. The move revokes them; another site's
// tokens stay.
func TestTenantMoveEndsTheOldTenantsServiceTokens(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t)
	site, other := mustCreate(t, s, "tenant-tokens"), mustCreate(t, s, "staying")
	mustPutAPI(t, s, site, "old-key", "old-secret")
	mustPutAPI(t, s, other, "k", "s")
	_, oldToken, err := s.IssueServiceToken(ctx, site.ID, "old company's bot")
	if err != nil {
		t.Fatal(err)
	}
	_, otherToken, err := s.IssueServiceToken(ctx, other.ID, "bot")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConnection(ctx, site.ID, sites.ConnectionAPIToken); err != nil {
		t.Fatal(err)
	}
	tenant := site.IdentityKey + "-other-tenant"
	if _, err := s.UpdateSite(ctx, site.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme","tenant":"Other"}`), IdentityKey: &tenant}); err != nil {
		t.Fatal(err)
	}
	mustPutAPI(t, s, site, "new-key", "new-secret")
	if _, _, err := s.ResolveServiceToken(ctx, oldToken.Reveal()); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Errorf("the old tenant's token with the new tenant's credential: %v, want ErrTokenInvalid", err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, otherToken.Reveal()); err != nil {
		t.Errorf("another site's token after the move: %v", err)
	}
}

// TestMovingASiteEndsItsOwnersKeptERPTokens: the ERP access tokens kept for
// owner-page sessions (owner_session_tokens) are the old ERP's or
// tenant's, bearers of an administrator's say there; the move ends those
// sessions (their scope names the old ERP), and their tokens go with them
// rather than stay sealed until the sweep. Another site's stay.
func TestMovingASiteEndsItsOwnersKeptERPTokens(t *testing.T) {
	ctx := t.Context()
	s, pool := newStore(t)
	byAddress, byTenant, other := mustCreate(t, s, "address-move"), mustCreate(t, s, "tenant-move"), mustCreate(t, s, "staying")
	for i, site := range []sites.Site{byAddress, byTenant, other} {
		if _, err := pool.Exec(ctx, `INSERT INTO owner_session_tokens (session_hash, site_id, erp_user, key_id, token, expires_at)
			VALUES ($1, $2, 'admin', 'k1', '\x02', now() + interval '30 minutes')`, []byte{byte(i + 1)}, site.ID); err != nil {
			t.Fatal(err)
		}
	}
	moved := "https://elsewhere.example.com"
	if _, err := s.UpdateSite(ctx, byAddress.ID, sites.SiteUpdate{BaseURL: &moved}); err != nil {
		t.Fatal(err)
	}
	tenant := byTenant.IdentityKey + "-other-tenant"
	if _, err := s.UpdateSite(ctx, byTenant.ID, sites.SiteUpdate{Settings: json.RawMessage(`{"company":"Acme","tenant":"Other"}`), IdentityKey: &tenant}); err != nil {
		t.Fatal(err)
	}
	for _, site := range []sites.Site{byAddress, byTenant, other} {
		want := 0
		if site.ID == other.ID {
			want = 1
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM owner_session_tokens WHERE site_id = $1`, site.ID).Scan(&n); err != nil || n != want {
			t.Errorf("site %s: %d owner ERP tokens after the moves (%v), want %d", site.Slug, n, err, want)
		}
	}
}
