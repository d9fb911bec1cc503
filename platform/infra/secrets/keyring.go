package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// KeySize is the length in bytes of every keyring key (AES-256).
const KeySize = 32

// nonceSize is the GCM standard nonce length. Ciphertexts start with it.
const nonceSize = 12

var (
	// ErrUnknownKey means a ciphertext names a key id the keyring does not
	// hold, typically because a key was removed from ERPGATE_ENCRYPTION_KEYS
	// before every row was re-encrypted.
	ErrUnknownKey = errors.New("secrets: unknown encryption key id")

	// ErrDecrypt means a ciphertext failed authentication: it was corrupted,
	// truncated, encrypted under another key with the same id, or bound to
	// different additional data.
	ErrDecrypt = errors.New("secrets: decryption failed")
)

// keyIDPattern is the shape of a key id. Ids are stored next to every
// ciphertext, so they are kept short and free of separators.
var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`)

// Keyring holds AES-256-GCM keys by id. The primary (first) key encrypts;
// every key decrypts, so keys can be rotated by prepending a new one and
// re-encrypting stored secrets before the old one is removed.
//
// A Keyring is immutable and safe for concurrent use. Formatting it shows key
// ids only. The zero Keyring holds no keys and is not usable; obtain one from
// ParseKeyring.
type Keyring struct {
	ids   []string // in specification order; ids[0] is the primary
	aeads map[string]cipher.AEAD
	// primary is the primary key's material, from which DeriveKey derives
	// keys for other uses.
	primary []byte
	// material is every key's material, in ids' order, from which
	// DeriveKeys derives.
	material [][]byte
}

// ParseKeyring parses an ERPGATE_ENCRYPTION_KEYS specification: a
// comma-separated list of id:base64key pairs, where each key is standard or
// URL-safe base64 (padded or not) of exactly 32 bytes and each id matches
// [A-Za-z0-9_.-]{1,32} and is unique. Blank entries are ignored.
//
// On failure the error is a *KeyringError listing every problem; problems
// name entries by position and, when it is well formed, by id, and never
// include key material.
func ParseKeyring(spec string) (*Keyring, error) {
	k := &Keyring{aeads: make(map[string]cipher.AEAD)}
	var problems []string
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, key, aead, problem := parseKeyEntry(entry)
		if problem != "" {
			problems = append(problems, describeEntry(i+1, id)+": "+problem)
			continue
		}
		if _, dup := k.aeads[id]; dup {
			problems = append(problems, describeEntry(i+1, id)+": duplicate key id")
			continue
		}
		if len(k.ids) == 0 {
			k.primary = key
		}
		k.ids = append(k.ids, id)
		k.material = append(k.material, key)
		k.aeads[id] = aead
	}
	if len(problems) == 0 && len(k.ids) == 0 {
		problems = append(problems, "no keys given; expected id:base64key[,id:base64key...]")
	}
	if len(problems) > 0 {
		return nil, &KeyringError{Problems: problems}
	}
	return k, nil
}

// parseKeyEntry parses one id:base64key pair. It returns the id whenever the
// id is well formed, even if the key is not, so problems can name it; a
// malformed id is never returned because it might be misplaced key material.
func parseKeyEntry(entry string) (id string, key []byte, aead cipher.AEAD, problem string) {
	rawID, encoded, found := strings.Cut(entry, ":")
	if !found {
		return "", nil, nil, "expected id:base64key"
	}
	rawID = strings.TrimSpace(rawID)
	if !keyIDPattern.MatchString(rawID) {
		return "", nil, nil, "key id must be 1 to 32 characters from A-Z a-z 0-9 _ . -"
	}
	key, ok := decodeBase64(strings.TrimSpace(encoded))
	if !ok {
		return rawID, nil, nil, "key is not valid base64"
	}
	if len(key) != KeySize {
		return rawID, nil, nil, fmt.Sprintf("key must be %d bytes after base64 decoding, got %d", KeySize, len(key))
	}
	aead, err := newAEAD(key)
	if err != nil {
		return rawID, nil, nil, "key cannot be used for AES-256-GCM"
	}
	return rawID, key, aead, ""
}

func describeEntry(position int, id string) string {
	if id == "" {
		return fmt.Sprintf("key %d", position)
	}
	return fmt.Sprintf("key %d (id %q)", position, id)
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: create AES cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: create GCM: %w", err)
	}
	return aead, nil
}

// PrimaryKeyID returns the id of the key that Seal encrypts with.
func (k *Keyring) PrimaryKeyID() string { return k.ids[0] }

// KeyIDs returns every key id, primary first, in specification order.
func (k *Keyring) KeyIDs() []string { return append([]string(nil), k.ids...) }

// Seal encrypts plaintext with the primary key, authenticating
// additionalData (see AdditionalData) without storing it. The ciphertext is a
// random 12-byte nonce followed by the GCM output; store it together with
// keyID. It fails only if the system random source fails.
func (k *Keyring) Seal(plaintext, additionalData []byte) (keyID string, ciphertext []byte, err error) {
	keyID = k.PrimaryKeyID()
	aead := k.aeads[keyID]
	out := make([]byte, nonceSize, nonceSize+len(plaintext)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return "", nil, fmt.Errorf("secrets: generate nonce: %w", err)
	}
	return keyID, aead.Seal(out, out, plaintext, additionalData), nil
}

// Open decrypts a ciphertext produced by Seal with the key it names and the
// same additionalData. An unknown keyID yields an error wrapping
// ErrUnknownKey; a ciphertext that is too short or fails authentication
// yields an error wrapping ErrDecrypt. Errors never contain the data.
func (k *Keyring) Open(keyID string, ciphertext, additionalData []byte) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("secrets: open ciphertext with key %q: %w", keyID, ErrUnknownKey)
	}
	if len(ciphertext) < nonceSize+aead.Overhead() {
		return nil, fmt.Errorf("secrets: open ciphertext with key %q: too short: %w", keyID, ErrDecrypt)
	}
	plaintext, err := aead.Open(nil, ciphertext[:nonceSize], ciphertext[nonceSize:], additionalData)
	if err != nil {
		// The cipher's own error is deliberately dropped: it carries no
		// detail worth keeping and callers only need the sentinel.
		return nil, fmt.Errorf("secrets: open ciphertext with key %q: %w", keyID, ErrDecrypt)
	}
	return plaintext, nil
}

// KeyringError lists every problem found in a key specification. Problems
// name keys by position and id only.
type KeyringError struct {
	Problems []string
}

// Error joins the problems on one line.
func (e *KeyringError) Error() string {
	return "secrets: invalid encryption keys: " + strings.Join(e.Problems, "; ")
}
