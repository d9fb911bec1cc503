package erptokens

import (
	"context"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// A refusal one replica holds is read by another, with the time it still
// holds, for that credential only, and not once it has run out.
func TestARefusalHeldOnOneReplicaHoldsOnAnother(t *testing.T) {
	ctx := context.Background()
	pools := openPools(t, 2)
	site := newSite(t, pools[0])
	keys := keyring(t, "k1")
	a, b := New(pools[0], keys, Options{}), New(pools[1], keys, Options{})
	refused := toolerr.New(toolerr.AuthExpired, "Acumatica refused to sign in the service connection's API user %q", "api.service")
	if err := a.HoldRefusal(ctx, site, "api.service#1", refused, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, left, err := b.HeldRefusal(ctx, site, "api.service#1")
	if err != nil || got == nil {
		t.Fatalf("the other replica reads no refusal: %v", err)
	}
	if got.Code != refused.Code || got.Message != refused.Message {
		t.Errorf("held %s %q, want %s %q", got.Code, got.Message, refused.Code, refused.Message)
	}
	if left <= 0 || left > time.Minute {
		t.Errorf("holds for %v more, want at most a minute", left)
	}
	if got, _, err := b.HeldRefusal(ctx, site, "api.service#2"); err != nil || got != nil {
		t.Errorf("another credential is held: %v %v", got, err)
	}
	// Run out: held for no time at all.
	if err := a.HoldRefusal(ctx, site, "api.service#1", refused, 0); err != nil {
		t.Fatal(err)
	}
	if got, _, err := b.HeldRefusal(ctx, site, "api.service#1"); err != nil || got != nil {
		t.Errorf("a refusal that ran out still holds: %v %v", got, err)
	}
}
