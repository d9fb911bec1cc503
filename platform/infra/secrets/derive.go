package secrets

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// DeriveKey returns a 32-byte key for one use named by info (such as
// "erpgate owner session signing"), derived from the primary key with
// HKDF-SHA256. A derived key never encrypts credentials, and knowing it
// reveals neither the primary key nor a key derived for another use.
// Rotating the primary key changes every derived key: what was signed with
// one (a session cookie) stops verifying.
func (k *Keyring) DeriveKey(info string) []byte {
	key, err := hkdf.Key(sha256.New, k.primary, nil, "erpgate\x00"+info, 32)
	if err != nil {
		// hkdf.Key fails only for a length beyond 255 hash sizes.
		panic("secrets: DeriveKey: " + err.Error())
	}
	return key
}
