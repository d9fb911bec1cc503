package secrets

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

func TestNewToken(t *testing.T) {
	tok, err := NewToken("egs")
	if err != nil {
		t.Fatalf("NewToken: %v", err)
	}
	text := tok.Value.Reveal()
	if !regexp.MustCompile(`^egs_[A-Za-z0-9_-]{43}$`).MatchString(text) {
		t.Fatalf("token text %q does not look like egs_ + 43 base64url characters", text)
	}
	random, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(text, "egs_"))
	if err != nil || len(random) != 32 {
		t.Fatalf("random part decodes to %d bytes (%v), want 32", len(random), err)
	}
	if tok.Hash != sha256.Sum256([]byte(text)) || tok.Hash != HashToken(text) {
		t.Error("Hash is not SHA-256 of the full token text")
	}
	if len(tok.DisplayPrefix) != len("egs_")+6 || !strings.HasPrefix(text, tok.DisplayPrefix) {
		t.Errorf("DisplayPrefix = %q, want egs_ and six characters that begin %q", tok.DisplayPrefix, text)
	}

	other, err := NewToken("egs")
	if err != nil {
		t.Fatalf("NewToken: %v", err)
	}
	if other.Value == tok.Value || other.Hash == tok.Hash {
		t.Error("two tokens are equal")
	}
}

func TestNewTokenRejectsBadPrefixes(t *testing.T) {
	for _, prefix := range []string{"", "EGS", "eg_s", "1egs", "averyveryverylongprefix"} {
		if _, err := NewToken(prefix); err == nil {
			t.Errorf("NewToken(%q) succeeded, want error", prefix)
		}
	}
}

func TestConstantTimeEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"admin-token", "admin-token", true},
		{"", "", true},
		{"admin-token", "admin-tokeN", false},
		{"admin-token", "admin-token-longer", false},
		{"", "x", false},
	}
	for _, tc := range cases {
		if got := ConstantTimeEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("ConstantTimeEqual(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
