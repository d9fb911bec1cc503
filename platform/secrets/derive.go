package secrets

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// DeriveKey returns a 32-byte key for one use, named by purpose (for
// example "erpgate console session"), derived from the primary key with
// HKDF-SHA256. Keys for different purposes are independent, and none
// reveals the primary key. A new primary key gives new derived keys.
func (k *Keyring) DeriveKey(purpose string) []byte {
	key, err := hkdf.Key(sha256.New, k.primary, []byte("erpgate derived key"), purpose, KeySize)
	if err != nil {
		// Only a length beyond 255 hash blocks fails.
		panic("secrets: DeriveKey: " + err.Error())
	}
	return key
}
