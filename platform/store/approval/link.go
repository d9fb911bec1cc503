package approval

import (
	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// LinkKeyPurpose is the secrets.Keyring.DeriveKey purpose of the key that
// tags approval links: LinkID with DeriveKey's, ParseLinkID with
// DeriveKeys'.
const LinkKeyPurpose = "approval link"

// LinkID is how an approval link names action id: the id with a check
// value under key (secrets.TagText), so that the page tells a link
// erpgate made from a made-up one without a lookup, and lets it pass a
// source whose bound on links that lead nowhere someone else at a shared
// address spent. Without a key it is the bare id, as links were before.
func LinkID(id uuid.UUID, key []byte) string {
	if len(key) == 0 {
		return id.String()
	}
	return secrets.TagText(id.String(), key)
}

// ParseLinkID reads an approval link's id, tagged (LinkID) or bare (the
// links made before check values). tagged is true only when the check
// value verifies under one of keys; an id whose check value does not (a
// made-up one, or one made under a key dropped since, as the key rotation
// allows right after it ran) is read as bare, to be looked up within the
// source's bound. ok is false when raw names no action.
func ParseLinkID(raw string, keys [][]byte) (id uuid.UUID, tagged, ok bool) {
	text, tagged := secrets.TaggedText(raw, keys)
	id, err := uuid.Parse(text)
	if err != nil || id == uuid.Nil {
		return uuid.Nil, false, false
	}
	return id, tagged, true
}
