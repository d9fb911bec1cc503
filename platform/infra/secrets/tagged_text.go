package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// TagText returns text followed by "." and a check value: the unpadded
// base64url encoding of the first 10 bytes of HMAC-SHA256 of text under
// key (80 bits, as a tagged token's). It serves identifiers erpgate puts
// in links (an approval's or a registration's id), so that a link
// erpgate made is told from a made-up one without a lookup. The text
// must not contain ".". key is one derived for the one kind of link
// (Keyring.DeriveKey), so a check value of one kind is no other's.
func TagText(text string, key []byte) string {
	return text + "." + base64.RawURLEncoding.EncodeToString(textTag(text, key))
}

// TaggedText splits value, made by TagText under one of keys (such as a
// Keyring's DeriveKeys, so that a link made before a rotation still
// verifies while its key is listed), into its text: ok is true only when
// the check value verifies. Value of any other shape gives its text
// before the last "." (value itself when it has none) and false.
func TaggedText(value string, keys [][]byte) (text string, ok bool) {
	i := strings.LastIndexByte(value, '.')
	if i < 0 {
		return value, false
	}
	text, encoded := value[:i], value[i+1:]
	tag, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil || len(tag) != tokenTagBytes {
		return text, false
	}
	for _, key := range keys {
		if hmac.Equal(tag, textTag(text, key)) {
			return text, true
		}
	}
	return text, false
}

func textTag(text string, key []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(text))
	return mac.Sum(nil)[:tokenTagBytes]
}
