package sites_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestConnectionRoundTripAndReplace(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")

	first := mustPutAPI(t, s, acme, "key-1", "secret-1")
	if first.VerifiedIdentity != "bot@example.com" || !slices.Equal(first.Fields, []string{"api_key", "api_secret"}) {
		t.Fatalf("put = %+v", first)
	}
	conn, fields, err := s.GetConnection(ctx, acme.ID, sites.ConnectionAPIToken)
	if err != nil {
		t.Fatal(err)
	}
	if conn.ID != first.ID || fields["api_key"].Reveal() != "key-1" || fields["api_secret"].Reveal() != "secret-1" {
		t.Fatalf("get = %+v (fields %d)", conn, len(fields))
	}
	// Nothing is stored in the clear.
	if n := count(t, pool, `SELECT count(*) FROM credentials WHERE position('secret-1'::bytea in ciphertext) > 0 OR key_id <> 'k1'`); n != 0 {
		t.Fatalf("%d credential rows hold plaintext or a wrong key id", n)
	}

	// Replacing keeps the connection's id, swaps every field and drops
	// fields the new credential lacks.
	replaced, err := s.PutConnection(ctx, acme.ID, sites.ConnectionAPIToken, "bot2@example.com",
		map[string]secrets.Secret{"api_key": "key-2"})
	if err != nil {
		t.Fatal(err)
	}
	if replaced.ID != first.ID || replaced.VerifiedIdentity != "bot2@example.com" || !slices.Equal(replaced.Fields, []string{"api_key"}) {
		t.Fatalf("replaced = %+v", replaced)
	}
	_, fields, err = s.GetConnection(ctx, acme.ID, sites.ConnectionAPIToken)
	if err != nil || len(fields) != 1 || fields["api_key"].Reveal() != "key-2" {
		t.Fatalf("after replace: %d fields, %v", len(fields), err)
	}

	oauth, err := s.PutConnection(ctx, acme.ID, sites.ConnectionOAuth, "", map[string]secrets.Secret{"client_id": "id", "client_secret": "cs"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListConnections(ctx, acme.ID)
	if err != nil || len(list) != 2 || list[0].Type != sites.ConnectionAPIToken || list[1].ID != oauth.ID ||
		!slices.Equal(list[1].Fields, []string{"client_id", "client_secret"}) {
		t.Fatalf("ListConnections = %+v, %v", list, err)
	}

	if err := s.DeleteConnection(ctx, acme.ID, sites.ConnectionOAuth); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteConnection(ctx, acme.ID, sites.ConnectionOAuth); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
	if _, _, err := s.GetConnection(ctx, acme.ID, sites.ConnectionOAuth); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("get deleted = %v, want ErrNotFound", err)
	}
	if n := count(t, pool, `SELECT count(*) FROM credentials WHERE field LIKE 'client%'`); n != 0 {
		t.Errorf("%d credentials of the deleted connection remain", n)
	}
}

func TestPutConnectionRefusals(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	cases := map[string]struct {
		typ    sites.ConnectionType
		fields map[string]secrets.Secret
	}{
		"type":        {"password", apiFields("k", "s")},
		"no fields":   {sites.ConnectionAPIToken, nil},
		"empty value": {sites.ConnectionAPIToken, apiFields("k", "")},
		"field name":  {sites.ConnectionAPIToken, map[string]secrets.Secret{"API Key": "k"}},
	}
	for name, c := range cases {
		if _, err := s.PutConnection(ctx, acme.ID, c.typ, "", c.fields); !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.PutConnection(ctx, uuid.New(), sites.ConnectionAPIToken, "", apiFields("k", "s")); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("unknown site: err = %v, want ErrNotFound", err)
	}
	if n := count(t, pool, `SELECT count(*) FROM connections`); n != 0 {
		t.Errorf("%d connections saved by refused puts", n)
	}
}

func TestConnectionsAreTenantScoped(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	a := mustCreate(t, s, "site-a")
	b := mustCreate(t, s, "site-b")
	mustPutAPI(t, s, a, "key-a", "secret-a")

	if _, _, err := s.GetConnection(ctx, b.ID, sites.ConnectionAPIToken); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("site B reading its (absent) connection = %v, want ErrNotFound", err)
	}
	if list, err := s.ListConnections(ctx, b.ID); err != nil || len(list) != 0 {
		t.Errorf("site B's connections = %+v, %v", list, err)
	}
	if bySite, err := s.ListConnectionsOfSites(ctx, nil); err != nil || len(bySite) != 0 {
		t.Errorf("connections of no sites = %v, %v", bySite, err)
	}
	if bySite, err := s.ListConnectionsOfSites(ctx, []uuid.UUID{a.ID, b.ID}); err != nil || len(bySite[a.ID]) != 1 || len(bySite[b.ID]) != 0 {
		t.Errorf("connections of A and B = %v, %v", bySite, err)
	}
	if err := s.DeleteConnection(ctx, b.ID, sites.ConnectionAPIToken); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("site B deleting = %v, want ErrNotFound", err)
	}
	if _, fields, err := s.GetConnection(ctx, a.ID, sites.ConnectionAPIToken); err != nil || fields["api_key"].Reveal() != "key-a" {
		t.Errorf("site A's connection after B's attempts: %v", err)
	}
}

// A ciphertext is bound to its site, connection type and field: moved
// anywhere else in the database it must fail to open, cleanly.
func TestCiphertextIsBoundToSiteAndField(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	a := mustCreate(t, s, "site-a")
	b := mustCreate(t, s, "site-b")
	mustPutAPI(t, s, a, "key-a", "secret-a")
	mustPutAPI(t, s, b, "key-b", "secret-b")

	// Within site B: the secret's ciphertext copied over the key's.
	if _, err := pool.Exec(ctx, `
		UPDATE credentials SET ciphertext = (SELECT ciphertext FROM credentials WHERE site_id = $1 AND field = 'api_secret')
		WHERE site_id = $1 AND field = 'api_key'`, b.ID); err != nil {
		t.Fatal(err)
	}
	_, fields, err := s.GetConnection(ctx, b.ID, sites.ConnectionAPIToken)
	if !errors.Is(err, sites.ErrCredentialUnreadable) || fields != nil {
		t.Errorf("field swap: err = %v, fields = %v; want ErrCredentialUnreadable and no fields", err, fields)
	}

	// Across sites: site A's secret copied into site B's secret.
	if _, err := pool.Exec(ctx, `
		UPDATE credentials SET ciphertext = (SELECT ciphertext FROM credentials WHERE site_id = $1 AND field = 'api_secret')
		WHERE site_id = $2`, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.GetConnection(ctx, b.ID, sites.ConnectionAPIToken)
	if !errors.Is(err, sites.ErrCredentialUnreadable) {
		t.Errorf("cross-site copy: err = %v, want ErrCredentialUnreadable", err)
	}
	if err != nil && containsAny(err.Error(), "secret-a", "key-a", "secret-b") {
		t.Errorf("error text leaks a credential: %v", err)
	}

	// Across connection types: site A's api_token secret moved to an oauth
	// connection's field of the same name.
	if _, err := s.PutConnection(ctx, a.ID, sites.ConnectionOAuth, "", map[string]secrets.Secret{"api_secret": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
		UPDATE credentials cr SET ciphertext = src.ciphertext
		FROM credentials src JOIN connections sc ON sc.id = src.connection_id AND sc.type = 'api_token'
		WHERE src.site_id = $1 AND src.field = 'api_secret'
		  AND cr.connection_id = (SELECT id FROM connections WHERE site_id = $1 AND type = 'oauth')`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetConnection(ctx, a.ID, sites.ConnectionOAuth); !errors.Is(err, sites.ErrCredentialUnreadable) {
		t.Errorf("cross-type copy: err = %v, want ErrCredentialUnreadable", err)
	}
	// The untouched connection still opens.
	if _, fields, err := s.GetConnection(ctx, a.ID, sites.ConnectionAPIToken); err != nil || fields["api_secret"].Reveal() != "secret-a" {
		t.Errorf("site A api_token after tampering elsewhere: %v", err)
	}
}

func containsAny(s string, subs ...string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// Credentials are verified against an origin and must never be sent to
// another: a site with connections cannot move, and a credential verified
// before a move is not saved after it.
func TestConnectionsPinTheOrigin(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	moved := "https://erp.elsewhere.example"

	if _, err := s.PutVerifiedConnection(ctx, acme.ID, "", sites.ConnectionAPIToken, "", apiFields("k", "s")); !errors.Is(err, sites.ErrInvalid) {
		t.Errorf("empty verified base URL = %v, want ErrInvalid", err)
	}
	mustPutAPI(t, s, acme, "key", "secret")
	if _, err := s.UpdateSite(ctx, acme.ID, sites.SiteUpdate{BaseURL: &moved}); !errors.Is(err, sites.ErrConnectionsExist) {
		t.Fatalf("moving a connected site = %v, want ErrConnectionsExist", err)
	}
	same := acme.BaseURL
	name := "Acme"
	if _, err := s.UpdateSite(ctx, acme.ID, sites.SiteUpdate{BaseURL: &same, DisplayName: &name}); err != nil {
		t.Fatalf("re-stating the same base URL = %v", err)
	}

	if err := s.DeleteConnection(ctx, acme.ID, sites.ConnectionAPIToken); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSite(ctx, acme.ID, sites.SiteUpdate{BaseURL: &moved}); err != nil {
		t.Fatalf("moving an unconnected site = %v", err)
	}
	// A credential verified against the old origin is refused now.
	_, err := s.PutVerifiedConnection(ctx, acme.ID, acme.BaseURL, sites.ConnectionAPIToken, "bot", apiFields("k", "s"))
	if !errors.Is(err, sites.ErrBaseURLChanged) {
		t.Fatalf("stale verification = %v, want ErrBaseURLChanged", err)
	}
	if n := count(t, pool, `SELECT count(*) FROM connections`); n != 0 {
		t.Fatal("a credential verified for another origin was saved")
	}
	if _, err := s.PutVerifiedConnection(ctx, acme.ID, moved, sites.ConnectionAPIToken, "bot", apiFields("k", "s")); err != nil {
		t.Fatalf("verified against the current origin = %v", err)
	}
}
