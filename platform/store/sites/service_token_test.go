package sites_test

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestServiceTokenLifecycle(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")

	if _, _, err := s.IssueServiceToken(ctx, acme.ID, "bot"); !errors.Is(err, sites.ErrNoAPIConnection) {
		t.Fatalf("issue without api_token connection = %v, want ErrNoAPIConnection", err)
	}
	if _, _, err := s.IssueServiceToken(ctx, uuid.New(), "bot"); !errors.Is(err, sites.ErrNotFound) {
		t.Fatalf("issue for unknown site = %v, want ErrNotFound", err)
	}
	mustPutAPI(t, s, acme, "key", "secret")

	st, value, err := s.IssueServiceToken(ctx, acme.ID, "voice agent")
	if err != nil {
		t.Fatal(err)
	}
	text := value.Reveal()
	if !strings.HasPrefix(text, "egs_") || !strings.HasPrefix(text, st.Prefix) || len(st.Prefix) >= len(text) ||
		st.Name != "voice agent" || st.SiteID != acme.ID || st.Revoked || st.LastUsedAt != nil {
		t.Fatalf("issued %+v", st)
	}
	// Only the hash is stored.
	sum := sha256.Sum256([]byte(text))
	if n := count(t, pool, `SELECT count(*) FROM service_tokens WHERE token_hash = $1 AND id = $2`, sum[:], st.ID); n != 1 {
		t.Fatal("stored hash is not the SHA-256 of the token")
	}
	if n := count(t, pool, `SELECT count(*) FROM service_tokens WHERE position($1::bytea in token_hash) > 0 OR prefix = $2`, []byte(text), text); n != 0 {
		t.Fatal("the token value is stored")
	}

	gotToken, gotSite, err := s.ResolveServiceToken(ctx, text)
	if err != nil || gotToken.ID != st.ID || gotSite.ID != acme.ID || gotSite.Slug != "acme" || gotToken.LastUsedAt == nil {
		t.Fatalf("resolve = %+v, %+v, %v", gotToken, gotSite, err)
	}

	second, _, err := s.IssueServiceToken(ctx, acme.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListServiceTokens(ctx, acme.ID)
	if err != nil || len(list) != 2 || list[0].ID != st.ID || list[1].ID != second.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}

	if err := s.RevokeServiceToken(ctx, acme.ID, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, text); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Errorf("resolve revoked = %v, want ErrTokenInvalid", err)
	}
	list, _ = s.ListServiceTokens(ctx, acme.ID)
	if !list[0].Revoked || list[0].RevokedAt == nil || list[1].Revoked {
		t.Errorf("after revoke: %+v", list)
	}
	firstRevokedAt := *list[0].RevokedAt
	if err := s.RevokeServiceToken(ctx, acme.ID, st.ID); err != nil {
		t.Errorf("revoking twice = %v, want nil", err)
	}
	list, _ = s.ListServiceTokens(ctx, acme.ID)
	if !list[0].RevokedAt.Equal(firstRevokedAt) {
		t.Errorf("second revoke moved revoked_at")
	}
	if err := s.RevokeServiceToken(ctx, acme.ID, uuid.New()); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("revoke unknown = %v, want ErrNotFound", err)
	}
	if _, _, err := s.IssueServiceToken(ctx, acme.ID, "bad\nname"); !errors.Is(err, sites.ErrInvalid) {
		t.Errorf("control character in name = %v, want ErrInvalid", err)
	}
}

func TestResolveServiceTokenRefusals(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	_, value, err := s.IssueServiceToken(ctx, acme.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	text := value.Reveal()

	for _, bad := range []string{"", "egs_", "egs_unknown", text + "x", strings.ToUpper(text), "Bearer " + text, strings.Repeat("a", 5000)} {
		if _, _, err := s.ResolveServiceToken(ctx, bad); !errors.Is(err, sites.ErrTokenInvalid) {
			t.Errorf("resolve %.20q = %v, want ErrTokenInvalid", bad, err)
		}
	}

	disabled := sites.StatusDisabled
	if _, err := s.UpdateSite(ctx, acme.ID, sites.SiteUpdate{Status: &disabled}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, text); !errors.Is(err, sites.ErrSiteDisabled) {
		t.Errorf("resolve on disabled site = %v, want ErrSiteDisabled", err)
	}
	active := sites.StatusActive
	if _, err := s.UpdateSite(ctx, acme.ID, sites.SiteUpdate{Status: &active}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, text); err != nil {
		t.Errorf("resolve after re-enabling = %v", err)
	}
}

func TestServiceTokensAreTenantScoped(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	a := mustCreate(t, s, "site-a")
	b := mustCreate(t, s, "site-b")
	mustPutAPI(t, s, a, "key-a", "secret-a")
	mustPutAPI(t, s, b, "key-b", "secret-b")
	tokA, valueA, err := s.IssueServiceToken(ctx, a.ID, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, valueB, err := s.IssueServiceToken(ctx, b.ID, "b")
	if err != nil {
		t.Fatal(err)
	}

	for value, want := range map[string]uuid.UUID{valueA.Reveal(): a.ID, valueB.Reveal(): b.ID} {
		st, site, err := s.ResolveServiceToken(ctx, value)
		if err != nil || site.ID != want || st.SiteID != want {
			t.Errorf("token resolved to site %s (token site %s), want %s: %v", site.ID, st.SiteID, want, err)
		}
	}
	if list, err := s.ListServiceTokens(ctx, b.ID); err != nil || len(list) != 1 || list[0].SiteID != b.ID {
		t.Errorf("site B's tokens = %+v, %v", list, err)
	}
	// Site B cannot revoke site A's token.
	if err := s.RevokeServiceToken(ctx, b.ID, tokA.ID); !errors.Is(err, sites.ErrNotFound) {
		t.Errorf("cross-site revoke = %v, want ErrNotFound", err)
	}
	if _, site, err := s.ResolveServiceToken(ctx, valueA.Reveal()); err != nil || site.ID != a.ID {
		t.Errorf("site A's token after B's revoke attempt: %v", err)
	}
}

// last_used_at is written at most once a minute per token, so a busy
// service client does not turn every call into a row write.
func TestResolveThrottlesLastUsed(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	st, value, err := s.IssueServiceToken(ctx, acme.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() time.Time {
		t.Helper()
		var at time.Time
		if err := pool.QueryRow(ctx, `SELECT last_used_at FROM service_tokens WHERE id = $1`, st.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	// xmin changes whenever the row is rewritten.
	rowVersion := func() string {
		t.Helper()
		var xmin string
		if err := pool.QueryRow(ctx, `SELECT xmin::text FROM service_tokens WHERE id = $1`, st.ID).Scan(&xmin); err != nil {
			t.Fatal(err)
		}
		return xmin
	}

	first, _, err := s.ResolveServiceToken(ctx, value.Reveal())
	if err != nil || first.LastUsedAt == nil {
		t.Fatalf("first resolve: %+v, %v", first, err)
	}
	stamped, version := lastUsed(), rowVersion()
	for range 3 {
		again, _, err := s.ResolveServiceToken(ctx, value.Reveal())
		if err != nil || !again.LastUsedAt.Equal(stamped) {
			t.Fatalf("resolve within the minute: %+v, %v", again, err)
		}
	}
	if rowVersion() != version || !lastUsed().Equal(stamped) {
		t.Fatal("resolves within the minute rewrote the row")
	}

	// Age the stamp past the resolution: the next resolve writes again.
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET last_used_at = last_used_at - interval '2 minutes' WHERE id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	aged := lastUsed()
	later, _, err := s.ResolveServiceToken(ctx, value.Reveal())
	if err != nil || !later.LastUsedAt.After(aged) || !lastUsed().Equal(*later.LastUsedAt) {
		t.Fatalf("resolve after the minute: %+v (aged %v, stored %v), %v", later, aged, lastUsed(), err)
	}

	// A revoked token's use is not recorded.
	if err := s.RevokeServiceToken(ctx, acme.ID, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET last_used_at = NULL WHERE id = $1`, st.ID); err != nil {
		t.Fatal(err)
	}
	_, _, _ = s.ResolveServiceToken(ctx, value.Reveal())
	if n := count(t, pool, `SELECT count(*) FROM service_tokens WHERE id = $1 AND last_used_at IS NULL`, st.ID); n != 1 {
		t.Error("a revoked token's use was recorded")
	}
}

func TestChangesAreReportedToTheChangeHook(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	site := mustCreate(t, store, "acme")
	var changed []uuid.UUID
	store.OnChange(func(id uuid.UUID) { changed = append(changed, id) })
	mustPutAPI(t, store, site, "k", "s")
	tok, _, err := store.IssueServiceToken(ctx, site.ID, "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RevokeServiceToken(ctx, site.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	name := "Renamed"
	if _, err := store.UpdateSite(ctx, site.ID, sites.SiteUpdate{DisplayName: &name}); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteConnection(ctx, site.ID, sites.ConnectionAPIToken); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteSite(ctx, site.ID); err != nil {
		t.Fatal(err)
	}
	if len(changed) != 5 {
		t.Fatalf("change hook called %d times, want 5 (put, revoke, update, delete connection, delete site)", len(changed))
	}
	for _, id := range changed {
		if id != site.ID {
			t.Errorf("hook got %s, want %s", id, site.ID)
		}
	}
}

// A token may be issued with a lifetime in days (GitHub's fine-grained
// tokens work so): it expires that many 24-hour days after it was issued,
// and from then on is refused like a revoked one. Without a lifetime it
// never expires. The listing shows both.
func TestServiceTokenExpiry(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")

	for _, days := range []int{-1, 367, 10000} {
		if _, _, err := s.IssueServiceTokenWithLifetime(ctx, acme.ID, "bot", days); !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("lifetime of %d days = %v, want ErrInvalid", days, err)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM service_tokens`); n != 0 {
		t.Fatalf("%d tokens issued by refused requests", n)
	}

	never, neverValue, err := s.IssueServiceTokenWithLifetime(ctx, acme.ID, "never", 0)
	if err != nil || never.ExpiresAt != nil || never.Expired {
		t.Fatalf("issue without lifetime = %+v, %v", never, err)
	}
	quarter, quarterValue, err := s.IssueServiceTokenWithLifetime(ctx, acme.ID, "quarter", 90)
	if err != nil {
		t.Fatal(err)
	}
	if quarter.ExpiresAt == nil || !quarter.ExpiresAt.Equal(quarter.CreatedAt.Add(90*24*time.Hour)) || quarter.Expired {
		t.Fatalf("issued for 90 days: created %v, expires %v, expired %v", quarter.CreatedAt, quarter.ExpiresAt, quarter.Expired)
	}
	longest, _, err := s.IssueServiceTokenWithLifetime(ctx, acme.ID, "longest", sites.MaxServiceTokenLifetimeDays)
	if err != nil || longest.ExpiresAt == nil || !longest.ExpiresAt.Equal(longest.CreatedAt.Add(366*24*time.Hour)) {
		t.Fatalf("issued for 366 days = %+v, %v", longest, err)
	}
	for _, v := range []string{neverValue.Reveal(), quarterValue.Reveal()} {
		if st, _, err := s.ResolveServiceToken(ctx, v); err != nil {
			t.Fatalf("resolve %s = %v", st.Name, err)
		}
	}
	resolved, _, _ := s.ResolveServiceToken(ctx, quarterValue.Reveal())
	if resolved.ExpiresAt == nil || !resolved.ExpiresAt.Equal(*quarter.ExpiresAt) {
		t.Errorf("resolve returns expiry %v, want %v", resolved.ExpiresAt, quarter.ExpiresAt)
	}

	// Ninety days pass for the quarter token: its times move back by that
	// much, which is what the database sees when they have passed.
	if _, err := pool.Exec(ctx, `UPDATE service_tokens SET created_at = created_at - interval '91 days', expires_at = expires_at - interval '91 days' WHERE id = $1`, quarter.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, quarterValue.Reveal()); !errors.Is(err, sites.ErrTokenInvalid) {
		t.Errorf("resolve expired = %v, want ErrTokenInvalid (as a revoked token)", err)
	}
	if _, _, err := s.ResolveServiceToken(ctx, neverValue.Reveal()); err != nil {
		t.Errorf("the token without expiry = %v", err)
	}
	list, err := s.ListServiceTokens(ctx, acme.ID)
	if err != nil || len(list) != 3 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	byName := map[string]sites.ServiceToken{}
	for _, st := range list {
		byName[st.Name] = st
	}
	if st := byName["never"]; st.ExpiresAt != nil || st.Expired || st.Revoked {
		t.Errorf("never-expiring token listed as %+v", st)
	}
	if st := byName["quarter"]; st.ExpiresAt == nil || !st.Expired || st.Revoked {
		t.Errorf("expired token listed as %+v", st)
	}
	if st := byName["longest"]; st.ExpiresAt == nil || st.Expired {
		t.Errorf("token with a year to go listed as %+v", st)
	}
}

// TestIssuedServiceTokenTellsIssuedTokensFromMadeUpOnes: the check tells
// an issued token from one of its shape that erpgate did not make, and
// from one issued before tokens carried a check value (bounded as
// before).
func TestIssuedServiceTokenTellsIssuedTokensFromMadeUpOnes(t *testing.T) {
	s, _ := newStore(t)
	acme := mustCreate(t, s, "acme")
	mustPutAPI(t, s, acme, "key", "secret")
	_, value, err := s.IssueServiceToken(t.Context(), acme.ID, "bot")
	if err != nil {
		t.Fatal(err)
	}
	text := value.Reveal()
	if !s.IssuedServiceToken(text) {
		t.Errorf("an issued token is not told as issued")
	}
	madeUp := text[:len(text)-1] + map[bool]string{true: "B", false: "A"}[text[len(text)-1] == 'A']
	if s.IssuedServiceToken(madeUp) {
		t.Errorf("a made-up token of an issued one's shape is told as issued")
	}
	if s.IssuedServiceToken("egs_" + strings.Repeat("A", 43)) {
		t.Errorf("a token of the old form is told as issued")
	}
}
