package secrets

import (
	"bytes"
	"testing"
)

func TestAdditionalDataIsUnambiguous(t *testing.T) {
	distinct := [][]string{
		nil,
		{""},
		{"", ""},
		{"ab", "c"},
		{"a", "bc"},
		{"abc"},
		{"site", "oauth", "client_secret"},
		{"site", "oauth", "client_secre", "t"},
		{"site", "oauthclient_secret"},
	}
	seen := map[string][]string{}
	for _, parts := range distinct {
		enc := string(AdditionalData(parts...))
		if prev, dup := seen[enc]; dup {
			t.Errorf("AdditionalData(%q) == AdditionalData(%q)", parts, prev)
		}
		seen[enc] = parts
	}
}

func TestAdditionalDataEncodingIsStable(t *testing.T) {
	// Stored ciphertexts depend on these exact bytes.
	got := AdditionalData("ab", "")
	want := []byte{0, 0, 0, 2, 'a', 'b', 0, 0, 0, 0}
	if !bytes.Equal(got, want) {
		t.Errorf("AdditionalData(ab, \"\") = %v, want %v", got, want)
	}
}
