package pagekit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Signer signs short values that a server must be able to trust when a
// browser hands them back, such as the subject of a session cookie. A
// signed value names its purpose and expiry, so a value signed for one
// purpose (a site owner's session) is never accepted for another (an
// operator's), and an old one stops working by itself. Nothing is stored:
// every replica with the same key verifies it.
type Signer struct {
	key []byte
}

// NewSigner returns a signer with key, which must hold at least 32 bytes
// of secret randomness (a key derived for this use, never a key that
// encrypts anything).
func NewSigner(key []byte) *Signer {
	if len(key) < 32 {
		panic("pagekit: NewSigner: the key must be at least 32 bytes")
	}
	return &Signer{key: append([]byte(nil), key...)}
}

// Sign returns value signed for purpose until expires, in a form that is
// safe in a cookie. The value itself is readable by whoever holds the
// token: sign identifiers, never secrets.
func (s *Signer) Sign(purpose, value string, expires time.Time) string {
	body := base64.RawURLEncoding.EncodeToString([]byte(value)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + s.mac(purpose, body)
}

// Verify returns the value of a token that s signed for purpose and that
// has not expired at now.
func (s *Signer) Verify(purpose, token string, now time.Time) (string, bool) {
	value, expires, ok := s.open(purpose, token)
	if !ok || !now.Before(expires) {
		return "", false
	}
	return value, true
}

// Expiry returns when a token that s signed for purpose expires, whether
// or not it has: what a record of it must outlast, on whatever clock.
func (s *Signer) Expiry(purpose, token string) (time.Time, bool) {
	_, expires, ok := s.open(purpose, token)
	return expires, ok
}

// open returns the value and expiry of a token that s signed for purpose.
func (s *Signer) open(purpose, token string) (string, time.Time, bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", time.Time{}, false
	}
	body, mac := token[:i], token[i+1:]
	if !hmac.Equal([]byte(mac), []byte(s.mac(purpose, body))) {
		return "", time.Time{}, false
	}
	enc, exp, ok := strings.Cut(body, ".")
	if !ok {
		return "", time.Time{}, false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	value, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", time.Time{}, false
	}
	return string(value), time.Unix(unix, 0), true
}

func (s *Signer) mac(purpose, body string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("erpgate signed\x00" + purpose + "\x00" + body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
