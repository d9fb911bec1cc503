package connector

import (
	"strings"
	"testing"
)

func TestOAuthErrorCodeKeepsItShortAndPlain(t *testing.T) {
	for in, want := range map[string]string{
		"access_denied":                    "access_denied",
		"":                                 "error",
		"<script>alert(1)</script>":        "scriptalertscript",
		"INVALID_CLIENT":                   "_",
		strings.Repeat("a", 100):           strings.Repeat("a", 40),
		"invalid_request\nforged log line": "invalid_requestforgedlogline",
	} {
		if got := OAuthErrorCode(in); got != want {
			t.Errorf("OAuthErrorCode(%q) = %q, want %q", in, got, want)
		}
	}
}
