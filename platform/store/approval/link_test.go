package approval

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestALinkMadeUnderADroppedKeyStillNamesItsAction: the key rotation lets
// the operator drop the old key right after `keys rotate`, and promises
// that nothing under way is lost. A change waiting for approval whose link
// was made under the old key was refused as no action at all: its check
// value verified under no key left. It names its action, untagged, as a
// link made before check values existed does (looked up within the
// source's bound); only a check value that verifies is tagged.
func TestALinkMadeUnderADroppedKeyStillNamesItsAction(t *testing.T) {
	id := uuid.New()
	old, current := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	if got, tagged, ok := ParseLinkID(LinkID(id, old), [][]byte{current}); !ok || tagged || got != id {
		t.Errorf("a link made under a dropped key: %s tagged=%v ok=%v, want %s untagged", got, tagged, ok, id)
	}
	if got, tagged, ok := ParseLinkID(LinkID(id, current), [][]byte{current, old}); !ok || !tagged || got != id {
		t.Errorf("a link made under a configured key: %s tagged=%v ok=%v, want %s tagged", got, tagged, ok, id)
	}
	if got, tagged, ok := ParseLinkID(id.String(), [][]byte{current}); !ok || tagged || got != id {
		t.Errorf("a bare id: %s tagged=%v ok=%v, want %s untagged", got, tagged, ok, id)
	}
	for _, raw := range []string{"", "not-an-id", "not-an-id.AAAAAAAAAAAAAA", uuid.Nil.String(), "." + id.String()} {
		if _, _, ok := ParseLinkID(raw, [][]byte{current}); ok {
			t.Errorf("%q names an action", raw)
		}
	}
}
