package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// GenerateKeySpec returns a fresh "id:base64key" entry for
// ERPGATE_ENCRYPTION_KEYS, holding 32 random bytes in standard base64. It is
// how `erpgate dev` creates a local key. The id must match
// [A-Za-z0-9_.-]{1,32}.
func GenerateKeySpec(id string) (string, error) {
	if !keyIDPattern.MatchString(id) {
		return "", fmt.Errorf("secrets: generate key %q: id must be 1 to 32 characters from A-Z a-z 0-9 _ . -", id)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("secrets: generate key %q: read random bytes: %w", id, err)
	}
	return id + ":" + base64.StdEncoding.EncodeToString(key), nil
}
