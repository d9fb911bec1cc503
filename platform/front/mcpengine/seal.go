package mcpengine

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/store/approval"
)

// Sealed tokens the engine hands to clients and reads back, so that
// nothing about a caller's approval or capabilities lives in a replica's
// memory: the request state of a 2026-07-28 approval (an input_required
// result's requestState) and the capability session id of earlier
// protocols (Mcp-Session-Id). Each is AES-256-GCM under a key of its own,
// derived from each of Options.StateKeys (secrets.Keyring.DeriveKeys(
// "approval-state")), with its purpose as additional data: a token of one
// kind never opens as the other, a changed byte opens as nothing, and a
// client learns nothing from its content. The first key seals and every
// one opens, so that a token outlives a key rotation (docs/operations.md)
// while its key is listed, first or not: replicas whose keys are listed in
// different orders open each other's tokens.

// sealer seals and opens one kind of token.
type sealer struct {
	// aeads are the state keys' ciphers, in order: the first seals.
	aeads   []cipher.AEAD
	purpose []byte
}

func newSealer(keys [][]byte, purpose string) (*sealer, error) {
	if len(keys) == 0 {
		return nil, errors.New("mcpengine: a state key is required")
	}
	s := &sealer{purpose: []byte(purpose)}
	for _, key := range keys {
		if len(key) < 32 {
			return nil, errors.New("mcpengine: the state key must have 32 bytes or more")
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte("erpgate mcpengine " + purpose))
		block, err := aes.NewCipher(mac.Sum(nil))
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// maxSealed bounds a token the engine will try to open.
const maxSealed = 2048

func (s *sealer) seal(v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, s.purpose)), nil
}

// open decodes token into v; false for anything the engine did not seal
// with this purpose under one of its keys. It tries each key at most once
// (GCM nonces and overheads are the same size under every key).
func (s *sealer) open(token string, v any) bool {
	if token == "" || len(token) > maxSealed {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	n := s.aeads[0].NonceSize()
	if err != nil || len(raw) < n+s.aeads[0].Overhead() {
		return false
	}
	for _, aead := range s.aeads {
		if plain, err := aead.Open(nil, raw[:n], raw[n:], s.purpose); err == nil {
			return json.Unmarshal(plain, v) == nil
		}
	}
	return false
}

// approvalState is a 2026-07-28 approval's request state: the pending
// action it is bound to, the whole key of the call that proposed it (its
// client too), and its expiry.
type approvalState struct {
	Action    uuid.UUID `json:"a"`
	Site      uuid.UUID `json:"s"`
	AuthType  string    `json:"t"`
	Principal string    `json:"p"`
	Client    string    `json:"c"`
	Tool      string    `json:"n"`
	Digest    []byte    `json:"d"`
	Expires   int64     `json:"e"`
}

func newApprovalState(a approval.Action) approvalState {
	return approvalState{Action: a.ID, Site: a.Key.SiteID, AuthType: a.Key.AuthType, Principal: a.Key.Principal,
		Client: a.Key.ClientID, Tool: a.Key.Tool, Digest: a.Key.ArgsDigest[:], Expires: a.ExpiresAt.Unix()}
}

// key is the key the state was issued for.
func (s approvalState) key() (approval.Key, bool) {
	k := approval.Key{SiteID: s.Site, AuthType: s.AuthType, Principal: s.Principal, ClientID: s.Client, Tool: s.Tool}
	if len(s.Digest) != len(k.ArgsDigest) {
		return k, false
	}
	copy(k.ArgsDigest[:], s.Digest)
	return k, true
}

func (s approvalState) expired(now time.Time) bool { return !now.Before(time.Unix(s.Expires, 0)) }

// HeaderSessionID is the header of the capability session id.
const HeaderSessionID = "Mcp-Session-Id"

// capabilitySession is what an earlier protocol's client declared at
// initialize, carried by the session id the engine issued: its protocol
// version, whether it takes URL-mode elicitations, and the site it was
// issued on.
type capabilitySession struct {
	Version string    `json:"v"`
	URL     bool      `json:"u"`
	Site    uuid.UUID `json:"s"`
	Issued  int64     `json:"i"`
}
