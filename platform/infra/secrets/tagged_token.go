package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// tokenTagBytes is the length of a tagged token's check value: 80 bits,
// so that a made-up token passes the check once in 2^80 tries.
const tokenTagBytes = 10

// NewTaggedToken is NewToken for a token that also carries a check value:
// its text is prefix + "_" + the unpadded base64url encoding of 32 random
// bytes followed by the first 10 bytes of HMAC-SHA256, under key, of the
// prefix, "_" and the random bytes. TokenTagged tells such a token from a
// made-up one without a lookup. The display prefix and Hash are those of
// NewToken (of the whole text). It fails as NewToken does.
func NewTaggedToken(prefix string, key []byte) (Token, error) {
	return newToken(prefix, func(random []byte) []byte { return tokenTag(prefix, random, key) })
}

// TokenTagged reports whether text is a token NewTaggedToken made with
// prefix under one of keys (such as a Keyring's DeriveKeys, so that a
// token tagged before a rotation still verifies). Text of any other shape,
// a token of NewToken among them, is false.
func TokenTagged(prefix, text string, keys [][]byte) bool {
	head := prefix + "_"
	if len(text) != len(head)+base64.RawURLEncoding.EncodedLen(tokenRandomBytes+tokenTagBytes) || text[:len(head)] != head {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(text[len(head):])
	if err != nil || len(raw) != tokenRandomBytes+tokenTagBytes {
		return false
	}
	random, tag := raw[:tokenRandomBytes], raw[tokenRandomBytes:]
	for _, key := range keys {
		if hmac.Equal(tag, tokenTag(prefix, random, key)) {
			return true
		}
	}
	return false
}

// tokenTag is the check value of a tagged token's random part.
func tokenTag(prefix string, random, key []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(prefix + "_"))
	mac.Write(random)
	return mac.Sum(nil)[:tokenTagBytes]
}
