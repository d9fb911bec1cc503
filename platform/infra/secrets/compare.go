package secrets

import (
	"crypto/sha256"
	"crypto/subtle"
)

// ConstantTimeEqual reports whether a and b are equal in time that depends on
// neither their contents nor their lengths, for checking a presented admin
// token. Both sides are hashed first because subtle.ConstantTimeCompare
// returns early, and so leaks, when the lengths differ.
func ConstantTimeEqual(a, b string) bool {
	ha := sha256.Sum256([]byte(a))
	hb := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
