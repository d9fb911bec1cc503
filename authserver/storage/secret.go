package storage

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// tokenHMACSecret names the HMAC key that signs erpgate's tokens.
const tokenHMACSecret = "token_hmac"

func secretAD(name string) []byte { return secrets.AdditionalData("oauth_secret", name) }

// TokenHMACKey returns the 32-byte key that signs every token, creating it
// on first use. Every replica reads the same key, so a token issued by one
// is valid on all.
func (s *Store) TokenHMACKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("storage: generate token key: %w", err)
	}
	keyID, ct, err := s.keys.Seal(fresh, secretAD(tokenHMACSecret))
	if err != nil {
		return nil, fmt.Errorf("storage: seal token key: %w", err)
	}
	// Replicas starting together race here; the first insert wins and
	// everyone reads the winner.
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_secrets (name, key_id, ciphertext) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		tokenHMACSecret, keyID, ct); err != nil {
		return nil, fmt.Errorf("storage: store token key: %w", database.Classify(err))
	}
	var storedKeyID string
	var storedCT []byte
	if err := s.pool.QueryRow(ctx, `SELECT key_id, ciphertext FROM oauth_secrets WHERE name = $1`, tokenHMACSecret).
		Scan(&storedKeyID, &storedCT); err != nil {
		return nil, fmt.Errorf("storage: read token key: %w", database.Classify(err))
	}
	key, err := s.keys.Open(storedKeyID, storedCT, secretAD(tokenHMACSecret))
	if err != nil {
		return nil, fmt.Errorf("storage: open token key: %w", err)
	}
	return key, nil
}
