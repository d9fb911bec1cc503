package pagekit

import (
	"strings"
	"testing"
	"time"
)

func TestSignerRoundTripAndRefusals(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	s := NewSigner(key)
	now := time.Unix(1_800_000_000, 0)
	tok := s.Sign("owner", "site-1|alice@example.com", now.Add(time.Hour))
	if v, ok := s.Verify("owner", tok, now); !ok || v != "site-1|alice@example.com" {
		t.Fatalf("Verify = %q, %v; want the signed value", v, ok)
	}
	cases := map[string]struct {
		purpose, token string
		at             time.Time
	}{
		"other purpose":  {"console", tok, now},
		"expired":        {"owner", tok, now.Add(time.Hour)},
		"value changed":  {"owner", strings.Replace(tok, tok[:4], "AAAA", 1), now},
		"expiry changed": {"owner", changeExpiry(t, tok), now},
		"other key":      {"owner", NewSigner([]byte(strings.Repeat("x", 32))).Sign("owner", "site-1|alice@example.com", now.Add(time.Hour)), now},
		"empty":          {"owner", "", now},
		"no dots":        {"owner", "abc", now},
	}
	for name, c := range cases {
		if v, ok := s.Verify(c.purpose, c.token, c.at); ok {
			t.Errorf("%s: Verify accepted %q", name, v)
		}
	}
}

// changeExpiry moves a token's expiry a day later, keeping its MAC.
func changeExpiry(t *testing.T, tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", tok, len(parts))
	}
	return parts[0] + "." + parts[1][:len(parts[1])-1] + "9." + parts[2]
}

func TestNewSignerRefusesShortKeys(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewSigner accepted a 16-byte key")
		}
	}()
	NewSigner(make([]byte, 16))
}
