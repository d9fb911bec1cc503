package secrets

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

func mustRing(t *testing.T, spec string) *Keyring {
	t.Helper()
	k, err := ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSpec(t *testing.T, id string) string {
	t.Helper()
	s, err := GenerateKeySpec(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTaggedTokenVerifiesUnderEveryKeyOfTheRing: a tagged token names
// nothing of the key it was tagged under, so a token issued before a
// rotation verifies under the key, now second in the ring, until it is
// removed; a made-up token, a token of the old form and one tagged under
// a key the ring does not hold do not verify.
func TestTaggedTokenVerifiesUnderEveryKeyOfTheRing(t *testing.T) {
	k1, k2 := mustSpec(t, "k1"), mustSpec(t, "k2")
	before := mustRing(t, k1)
	tok, err := NewTaggedToken("egs", before.DeriveKeys("token check")[0])
	if err != nil {
		t.Fatal(err)
	}
	text := tok.Value.Reveal()
	if !regexp.MustCompile(`^egs_[A-Za-z0-9_-]{56}$`).MatchString(text) {
		t.Fatalf("token text %q does not look like egs_ + 56 base64url characters", text)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(text, "egs_"))
	if len(raw) != tokenRandomBytes+tokenTagBytes {
		t.Fatalf("token decodes to %d bytes, want %d", len(raw), tokenRandomBytes+tokenTagBytes)
	}
	if tok.Hash != HashToken(text) || tok.DisplayPrefix != text[:len("egs_")+6] {
		t.Errorf("Hash or DisplayPrefix (%q) not those of the full text", tok.DisplayPrefix)
	}

	rotated := mustRing(t, k2+","+k1)
	if !TokenTagged("egs", text, before.DeriveKeys("token check")) {
		t.Error("the token does not verify under the key it was tagged with")
	}
	if !TokenTagged("egs", text, rotated.DeriveKeys("token check")) {
		t.Error("the token does not verify once its key is second in the ring")
	}
	if TokenTagged("egs", text, mustRing(t, k2).DeriveKeys("token check")) {
		t.Error("the token verifies under a ring without its key")
	}
	if TokenTagged("egs", text, rotated.DeriveKeys("another use")) {
		t.Error("the token verifies under a key derived for another use")
	}
	if TokenTagged("egc", "egc_"+strings.TrimPrefix(text, "egs_"), rotated.DeriveKeys("token check")) {
		t.Error("the token's tag verifies under another prefix")
	}
	old, _ := NewToken("egs")
	for name, s := range map[string]string{
		"an old-format token": old.Value.Reveal(),
		"another tag":         text[:len(text)-1] + string("AB"[boolIndex(text[len(text)-1] == 'A')]),
		"another random part": "egs_" + string("AB"[boolIndex(text[4] == 'A')]) + text[5:],
		"a longer text":       text + "A",
		"not base64":          text[:len(text)-1] + "*",
		"empty":               "",
	} {
		if TokenTagged("egs", s, rotated.DeriveKeys("token check")) {
			t.Errorf("%s verifies", name)
		}
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDeriveKeysStartsWithDeriveKey: the primary's derived key is the one
// DeriveKey gives; each key of the ring derives its own.
func TestDeriveKeysStartsWithDeriveKey(t *testing.T) {
	ring := mustRing(t, mustSpec(t, "k2")+","+mustSpec(t, "k1"))
	keys := ring.DeriveKeys("use")
	if len(keys) != 2 || string(keys[0]) != string(ring.DeriveKey("use")) || string(keys[0]) == string(keys[1]) {
		t.Errorf("DeriveKeys: %d keys, first DeriveKey's: %v", len(keys), string(keys[0]) == string(ring.DeriveKey("use")))
	}
}
