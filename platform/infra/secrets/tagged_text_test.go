package secrets

import (
	"strings"
	"testing"
)

// A tagged text verifies under its key, and under a ring that lists it
// second (after a rotation); under another key, with its check value
// changed, or without one, it does not, but its text is still given.
func TestTaggedText(t *testing.T) {
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	const id = "0195d1f4-0000-7000-8000-000000000001"
	tagged := TagText(id, k1)
	if !strings.HasPrefix(tagged, id+".") || len(tagged) != len(id)+1+14 {
		t.Fatalf("tagged text %q", tagged)
	}
	for name, keys := range map[string][][]byte{"its key": {k1}, "a ring with its key second": {k2, k1}} {
		if text, ok := TaggedText(tagged, keys); !ok || text != id {
			t.Errorf("under %s: %q, %v", name, text, ok)
		}
	}
	changed := []byte(tagged)
	changed[len(changed)-1] ^= 1
	if changed[len(changed)-1] == '.' {
		changed[len(changed)-1] = 'A'
	}
	for name, c := range map[string]struct {
		value string
		keys  [][]byte
	}{
		"another key":          {tagged, [][]byte{k2}},
		"no key":               {tagged, nil},
		"a changed check":      {string(changed), [][]byte{k1}},
		"another text's check": {"0195d1f4-0000-7000-8000-000000000002" + tagged[len(id):], [][]byte{k1}},
		"no check":             {id, [][]byte{k1}},
		"a short check":        {id + ".AAAA", [][]byte{k1}},
	} {
		text, ok := TaggedText(c.value, c.keys)
		if ok {
			t.Errorf("%s: verified", name)
		}
		if want, _, _ := strings.Cut(c.value, "."); text != want {
			t.Errorf("%s: text %q, want %q", name, text, want)
		}
	}
}
