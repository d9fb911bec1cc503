package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParseKeyring: whatever ERPGATE_ENCRYPTION_KEYS holds, ParseKeyring
// either returns a keyring whose primary key seals and opens, or a
// *KeyringError whose text never repeats what an entry holds after its
// colon (the key material), nor an entry without a colon.
func FuzzParseKeyring(f *testing.F) {
	const k1 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	for _, s := range []string{
		"k1:" + k1,
		"k1:" + k1 + ",k2:" + strings.TrimRight(k1, "="),
		"k1:" + k1 + ",k1:" + k1,
		k1,
		"k1:" + k1[:20],
		" , k1 : " + k1 + " ,",
		k1 + ":k1",
		"bad id!:" + k1,
		"k1:" + strings.ReplaceAll(k1, "A", "-"),
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		k, err := ParseKeyring(spec)
		if err == nil {
			id, ct, err := k.Seal([]byte("secret"), []byte("ad"))
			if err != nil || id != k.PrimaryKeyID() {
				t.Fatalf("ParseKeyring(%q): Seal: %q, %v", spec, id, err)
			}
			pt, err := k.Open(id, ct, []byte("ad"))
			if err != nil || !bytes.Equal(pt, []byte("secret")) {
				t.Fatalf("ParseKeyring(%q): Open: %q, %v", spec, pt, err)
			}
			return
		}
		var ke *KeyringError
		if !errors.As(err, &ke) {
			t.Fatalf("ParseKeyring(%q): %T %v", spec, err, err)
		}
		// What the message may repeat: the well-formed ids it names, and
		// its own words.
		msg := err.Error()
		for _, entry := range strings.Split(spec, ",") {
			if id, _, ok := strings.Cut(entry, ":"); ok && keyIDPattern.MatchString(strings.TrimSpace(id)) {
				msg = strings.ReplaceAll(msg, fmt.Sprintf("(id %q)", strings.TrimSpace(id)), "")
			}
		}
		for _, entry := range strings.Split(spec, ",") {
			secret := strings.TrimSpace(entry)
			if _, after, ok := strings.Cut(entry, ":"); ok {
				secret = strings.TrimSpace(after)
			}
			if len(secret) < 8 || strings.Contains(keyringMessages, secret) {
				continue
			}
			if strings.Contains(msg, secret) {
				t.Fatalf("ParseKeyring(%q): the error repeats %q: %s", spec, secret, msg)
			}
		}
	})
}

// keyringMessages is the fixed text of ParseKeyring's problems.
const keyringMessages = "secrets: invalid encryption keys: no keys given; expected id:base64key[,id:base64key...] " +
	"key id must be 1 to 32 characters from A-Z a-z 0-9 _ . - key is not valid base64 " +
	"key must be 32 bytes after base64 decoding, got duplicate key id"
