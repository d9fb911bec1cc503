package manage

import (
	"strings"
	"testing"
)

// seedEndedTokens gives site slug n tokens revoked a day ago and earlier,
// named "<slug> ended <i>" (the first revoked last), issued 400 days ago.
func (p *pages) seedEndedTokens(t *testing.T, slug string, from, n int) {
	t.Helper()
	if _, err := p.pool.Exec(t.Context(), `
		INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, created_at, revoked, revoked_at)
		SELECT gen_random_uuid(), s.id, s.slug || ' ended ' || i, sha256(convert_to(s.slug || ' ended ' || i, 'UTF8')), 'egs_x',
		       now() - interval '400 days', true, now() - interval '1 day' - i * interval '1 minute'
		FROM sites s, generate_series($2::int, $2::int + $3::int - 1) i WHERE s.slug = $1`, slug, from, n); err != nil {
		t.Fatal(err)
	}
}

// The owner's page lists the 20 tokens that ended last and says how many
// older ones it leaves out. That count is bounded too: an owner who
// issues and revokes in a loop for a year has hundreds of thousands of
// ended tokens, each of which the count read on every view of the page.
// Up to 1,000 it is exact; past that the page says "more than 1,000".
// Another site's tokens are never counted.
func TestOwnerPageCountsOlderEndedTokensUpToABound(t *testing.T) {
	p := newPages(t)
	session := p.session(p.acme, "it.admin@demo.example")
	p.seedEndedTokens(t, "beta", 0, 50)
	notShown := func() string {
		t.Helper()
		_, body := p.get(t, "/sites/acme/manage", session)
		if !strings.Contains(body, ownerPage) {
			t.Fatalf("not the owner's page: %s", body)
		}
		i := strings.Index(body, "not shown.")
		if i < 0 {
			return ""
		}
		return body[strings.LastIndex(body[:i], ">")+1 : i+len("not shown.")]
	}

	p.seedEndedTokens(t, "acme", 0, 21)
	if got, want := notShown(), "1 older revoked or expired token is not shown."; got != want {
		t.Errorf("21 ended: the page says %q, want %q", got, want)
	}
	p.seedEndedTokens(t, "acme", 21, 999)
	if got, want := notShown(), "1,000 older revoked or expired tokens are not shown."; got != want {
		t.Errorf("1020 ended: the page says %q, want %q", got, want)
	}
	p.seedEndedTokens(t, "acme", 1020, 1)
	if got, want := notShown(), "More than 1,000 older revoked or expired tokens are not shown."; got != want {
		t.Errorf("1021 ended: the page says %q, want %q", got, want)
	}
	p.seedEndedTokens(t, "acme", 1021, 3000)
	if got, want := notShown(), "More than 1,000 older revoked or expired tokens are not shown."; got != want {
		t.Errorf("4021 ended: the page says %q, want %q", got, want)
	}
}
