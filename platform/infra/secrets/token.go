package secrets

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
)

// tokenRandomBytes is the entropy in every token: 256 bits.
const tokenRandomBytes = 32

// displayRandomChars is how much of the random part a display prefix keeps:
// enough for an operator to tell tokens apart, far too little to guess one.
const displayRandomChars = 6

// tokenPrefixPattern keeps prefixes short and free of the "_" separator, so
// the prefix of any token text is unambiguous.
var tokenPrefixPattern = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)

// Token is a freshly issued opaque bearer token. Show Value to its owner
// once; store only Hash (to look the token up) and DisplayPrefix (to name it
// in consoles and logs).
type Token struct {
	// Value is the full token text, prefix + "_" + base64url(32 random bytes).
	Value Secret
	// Hash is HashToken of the full token text.
	Hash [32]byte
	// DisplayPrefix is the prefix, "_" and the first six characters of the
	// random part, e.g. "egs_Q2x9aB": a literal prefix of Value.
	DisplayPrefix string
}

// NewToken issues a token whose text is prefix + "_" + the unpadded base64url
// encoding of 32 random bytes, e.g. "egs_…". The prefix must be a lower-case
// letter followed by up to 15 lower-case letters or digits. It fails if the
// prefix is malformed or the system random source fails.
func NewToken(prefix string) (Token, error) { return newToken(prefix, nil) }

// newToken issues a token with prefix whose random part is followed, when
// tag is not nil, by tag's check value of it (NewTaggedToken).
func newToken(prefix string, tag func(random []byte) []byte) (Token, error) {
	if !tokenPrefixPattern.MatchString(prefix) {
		return Token{}, fmt.Errorf("secrets: new token with prefix %q: prefix must be a lower-case letter followed by up to 15 lower-case letters or digits", prefix)
	}
	raw := make([]byte, tokenRandomBytes, tokenRandomBytes+tokenTagBytes)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, fmt.Errorf("secrets: new token with prefix %q: read random bytes: %w", prefix, err)
	}
	if tag != nil {
		raw = append(raw, tag(raw)...)
	}
	encoded := base64.RawURLEncoding.EncodeToString(raw)
	text := prefix + "_" + encoded
	return Token{
		Value:         Secret(text),
		Hash:          HashToken(text),
		DisplayPrefix: prefix + "_" + encoded[:displayRandomChars],
	}, nil
}

// DisplayPrefixOf returns the display prefix of text if it has the shape
// of a token with prefix ("egs_Q2x9aB" of "egs_Q2x9aB..."): what may name
// a token someone pasted where its value does not belong (an id), without
// repeating the value. ok is false for text of any other shape.
func DisplayPrefixOf(prefix, text string) (shown string, ok bool) {
	n := len(prefix) + 1 + displayRandomChars
	if len(text) <= n || text[:len(prefix)+1] != prefix+"_" {
		return "", false
	}
	return text[:n], true
}

// HashToken returns the SHA-256 of the full token text: the only form in
// which tokens are stored and looked up. Plain SHA-256 suffices because
// tokens carry 256 bits of entropy; there is nothing to brute-force.
func HashToken(text string) [32]byte {
	return sha256.Sum256([]byte(text))
}
