package sites_test

import (
	"testing"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// An event whose input held a NUL or bytes that are not UTF-8 (a refused
// request's) is kept, with those replaced; a backslash typed before
// "u0000" is text and stays as it was.
func TestEventKeepsWhatPostgresCannotStoreReplaced(t *testing.T) {
	s, pool := newStore(t)
	err := s.RecordEvent(t.Context(), sites.Event{SiteSlug: "a\x00b", ActorKind: "operator", Actor: "admin_token",
		Action: "revoke_person", Outcome: "refused", Reason: "bad \xff",
		Details: map[string]any{"erp_user": "ann\x00@acme", "typed": `\u0000`}})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM admin_events WHERE site_slug = 'a'||U&'\FFFD'||'b' AND reason = 'bad '||U&'\FFFD'
		AND details->>'erp_user' = 'ann'||U&'\FFFD'||'@acme' AND details->>'typed' = '\u0000'`); n != 1 {
		t.Errorf("%d events stored with the replacements, want 1", n)
	}
}
