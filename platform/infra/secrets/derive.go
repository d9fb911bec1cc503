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
	return derive(k.primary, info)
}

// DeriveKeys returns the key DeriveKey would derive for info from each
// key of the ring, primary first (DeriveKey's), in specification order.
// It serves checks that must outlive a rotation: a value made with the
// primary's derived key (DeriveKeys(info)[0]) still verifies against one
// of them while its key stays in the ring, second or later.
func (k *Keyring) DeriveKeys(info string) [][]byte {
	keys := make([][]byte, len(k.material))
	for i, m := range k.material {
		keys[i] = derive(m, info)
	}
	return keys
}

func derive(material []byte, info string) []byte {
	key, err := hkdf.Key(sha256.New, material, nil, "erpgate\x00"+info, 32)
	if err != nil {
		// hkdf.Key fails only for a length beyond 255 hash sizes.
		panic("secrets: DeriveKey: " + err.Error())
	}
	return key
}
