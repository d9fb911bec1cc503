package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testKey returns a deterministic 32-byte key whose bytes are all b, so that
// tests can search error text for its encodings.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func mustKeyring(t *testing.T, spec string) *Keyring {
	t.Helper()
	k, err := ParseKeyring(spec)
	if err != nil {
		t.Fatalf("ParseKeyring: %v", err)
	}
	return k
}

func TestParseKeyringAcceptsEveryBase64Flavour(t *testing.T) {
	// 0xfb bytes make the standard and URL alphabets differ ('+/' vs '-_').
	key := testKey(0xfb)
	spec := strings.Join([]string{
		"std:" + base64.StdEncoding.EncodeToString(key),
		"rawstd:" + base64.RawStdEncoding.EncodeToString(key),
		"url:" + base64.URLEncoding.EncodeToString(key),
		" raw.url-2_x : " + base64.RawURLEncoding.EncodeToString(key) + " ",
		"", // a trailing comma is harmless
	}, ",")
	k := mustKeyring(t, spec)
	if got, want := k.KeyIDs(), []string{"std", "rawstd", "url", "raw.url-2_x"}; !slices.Equal(got, want) {
		t.Errorf("KeyIDs() = %v, want %v", got, want)
	}
	if got := k.PrimaryKeyID(); got != "std" {
		t.Errorf("PrimaryKeyID() = %q, want %q", got, "std")
	}
}

func TestKeyIDsReturnsACopy(t *testing.T) {
	k := mustKeyring(t, "a:"+base64.StdEncoding.EncodeToString(testKey(1)))
	k.KeyIDs()[0] = "changed"
	if k.PrimaryKeyID() != "a" {
		t.Fatal("mutating KeyIDs() result changed the keyring")
	}
}

func TestParseKeyringReportsEveryProblemWithoutKeyMaterial(t *testing.T) {
	short := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xab}, 16))
	good := base64.StdEncoding.EncodeToString(testKey(0xcd))
	misplaced := base64.StdEncoding.EncodeToString(testKey(0xef))
	spec := strings.Join([]string{
		"k1:" + short,          // 1: wrong length
		"k2:" + good,           // 2: fine
		"k2:" + good,           // 3: duplicate id
		misplaced,              // 4: no id at all
		"bad id!:" + good,      // 5: invalid id
		"k6:not*base64",        // 6: undecodable
		misplaced + ":" + good, // 7: id too long (key pasted as id)
	}, ",")

	_, err := ParseKeyring(spec)
	var kerr *KeyringError
	if !errors.As(err, &kerr) {
		t.Fatalf("ParseKeyring error = %v, want *KeyringError", err)
	}
	wantFragments := []string{
		`key 1 (id "k1"): key must be 32 bytes after base64 decoding, got 16`,
		`key 3 (id "k2"): duplicate key id`,
		`key 4: expected id:base64key`,
		`key 5: key id must be`,
		`key 6 (id "k6"): key is not valid base64`,
		`key 7: key id must be`,
	}
	if len(kerr.Problems) != len(wantFragments) {
		t.Fatalf("got %d problems, want %d: %q", len(kerr.Problems), len(wantFragments), kerr.Problems)
	}
	for i, want := range wantFragments {
		if !strings.Contains(kerr.Problems[i], want) {
			t.Errorf("problem %d = %q, want it to contain %q", i, kerr.Problems[i], want)
		}
	}
	for _, material := range []string{short, good, misplaced, "not*base64", "bad id!"} {
		if strings.Contains(err.Error(), material) {
			t.Errorf("error text contains input %q: %s", material, err)
		}
	}
}

func TestParseKeyringRejectsEmptySpec(t *testing.T) {
	for _, spec := range []string{"", " ", ",,"} {
		if _, err := ParseKeyring(spec); err == nil {
			t.Errorf("ParseKeyring(%q) succeeded, want error", spec)
		}
	}
}

func TestSealOpenRoundTripAndRotation(t *testing.T) {
	oldSpec := "old:" + base64.StdEncoding.EncodeToString(testKey(1))
	newSpec := "new:" + base64.StdEncoding.EncodeToString(testKey(2))
	before := mustKeyring(t, oldSpec)
	after := mustKeyring(t, newSpec+","+oldSpec)
	ad := AdditionalData("site-1", "oauth", "client_secret")

	keyID, ct, err := before.Seal([]byte("hunter2"), ad)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if keyID != "old" {
		t.Fatalf("Seal key id = %q, want old", keyID)
	}
	if bytes.Contains(ct, []byte("hunter2")) {
		t.Fatal("ciphertext contains the plaintext")
	}
	// The rotated keyring still opens old ciphertexts …
	got, err := after.Open(keyID, ct, ad)
	if err != nil || string(got) != "hunter2" {
		t.Fatalf("Open after rotation = %q, %v; want hunter2, nil", got, err)
	}
	// … and seals new ones with the new primary.
	keyID, _, err = after.Seal([]byte("x"), ad)
	if err != nil || keyID != "new" {
		t.Fatalf("Seal after rotation used key %q (err %v), want new", keyID, err)
	}
}

func TestSealUsesAFreshNonce(t *testing.T) {
	k := mustKeyring(t, "a:"+base64.StdEncoding.EncodeToString(testKey(3)))
	_, c1, err1 := k.Seal([]byte("same"), nil)
	_, c2, err2 := k.Seal([]byte("same"), nil)
	if err1 != nil || err2 != nil {
		t.Fatalf("Seal: %v, %v", err1, err2)
	}
	if bytes.Equal(c1[:nonceSize], c2[:nonceSize]) {
		t.Fatal("two Seal calls reused a nonce")
	}
	if len(c1) != nonceSize+len("same")+16 {
		t.Fatalf("ciphertext length = %d, want nonce + plaintext + tag", len(c1))
	}
}

func TestOpenFailures(t *testing.T) {
	k := mustKeyring(t, "a:"+base64.StdEncoding.EncodeToString(testKey(4)))
	other := mustKeyring(t, "a:"+base64.StdEncoding.EncodeToString(testKey(5)))
	ad := AdditionalData("site-1", "api_token", "secret")
	keyID, ct, err := k.Seal([]byte("plain-value"), ad)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	tampered := bytes.Clone(ct)
	tampered[len(tampered)-1] ^= 1

	cases := []struct {
		name  string
		ring  *Keyring
		keyID string
		ct    []byte
		ad    []byte
		want  error
	}{
		{"unknown key id", k, "missing", ct, ad, ErrUnknownKey},
		{"other additional data", k, keyID, ct, AdditionalData("site-2", "api_token", "secret"), ErrDecrypt},
		{"tampered", k, keyID, tampered, ad, ErrDecrypt},
		{"too short", k, keyID, ct[:nonceSize+3], ad, ErrDecrypt},
		{"empty", k, keyID, nil, ad, ErrDecrypt},
		{"same id, other key", other, keyID, ct, ad, ErrDecrypt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ring.Open(tc.keyID, tc.ct, tc.ad)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open error = %v, want %v", err, tc.want)
			}
			if got != nil {
				t.Errorf("Open returned data %q on failure", got)
			}
			if strings.Contains(err.Error(), "plain-value") || (len(tc.ct) > 0 && strings.Contains(err.Error(), fmt.Sprintf("%x", tc.ct))) {
				t.Errorf("error echoes data: %v", err)
			}
		})
	}
}

func TestKeyringFormattingShowsIDsOnly(t *testing.T) {
	key := testKey(0x7e)
	k := mustKeyring(t, "primary:"+base64.StdEncoding.EncodeToString(key)+",old:"+base64.StdEncoding.EncodeToString(testKey(6)))
	holder := struct{ K *Keyring }{k}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%d"} {
		got := fmt.Sprintf(verb, holder)
		if !strings.Contains(got, "primary") || strings.Contains(got, "126") || strings.Contains(got, "7e7e") {
			t.Errorf("Sprintf(%s) = %q: want ids only", verb, got)
		}
	}
}

func TestGenerateKeySpec(t *testing.T) {
	spec, err := GenerateKeySpec("dev")
	if err != nil {
		t.Fatalf("GenerateKeySpec: %v", err)
	}
	k := mustKeyring(t, spec)
	if k.PrimaryKeyID() != "dev" {
		t.Errorf("generated spec has primary %q, want dev", k.PrimaryKeyID())
	}
	again, err := GenerateKeySpec("dev")
	if err != nil || again == spec {
		t.Errorf("second GenerateKeySpec = (same=%v, %v), want a different key", again == spec, err)
	}
	if _, err := GenerateKeySpec("no spaces"); err == nil {
		t.Error("GenerateKeySpec accepted an invalid id")
	}
}

func TestDeriveKeyIsPerUseAndFollowsThePrimaryKey(t *testing.T) {
	a, err := GenerateKeySpec("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKeySpec("b")
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := ParseKeyring(a + "," + b)
	kaAgain, _ := ParseKeyring(a)
	kb, _ := ParseKeyring(b + "," + a)
	one, other := ka.DeriveKey("owner session"), ka.DeriveKey("operator session")
	if len(one) != 32 || bytes.Equal(one, other) {
		t.Fatalf("derived keys for two uses: %x, %x", one, other)
	}
	if !bytes.Equal(one, kaAgain.DeriveKey("owner session")) {
		t.Error("the same primary key derived another key")
	}
	if bytes.Equal(one, kb.DeriveKey("owner session")) {
		t.Error("another primary key derived the same key")
	}
}
