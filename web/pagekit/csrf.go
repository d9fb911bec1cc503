package pagekit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// CSRFToken is the token a form carries: an HMAC of the form's purpose
// (for a sign-in, its flow id) keyed by a cookie value that only the
// browser holds. A cross-site page can neither read the cookie nor guess
// the token, and nothing needs storing (a synchronizer token without
// state). The cookie must be HttpOnly and unguessable (32 random bytes).
func CSRFToken(cookieValue, purpose string) string {
	m := hmac.New(sha256.New, []byte(cookieValue))
	m.Write([]byte("erpgate csrf\x00" + purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether a submitted token is right for the cookie and
// purpose. An empty cookie value or token never passes.
func CheckCSRF(cookieValue, purpose, presented string) bool {
	return cookieValue != "" && presented != "" && hmac.Equal([]byte(CSRFToken(cookieValue, purpose)), []byte(presented))
}

// NoticeCheck is the check value a redirect adds, as the query parameter
// "check", to the notice it names (such as ?done=token-revoked), for the
// browser whose binding cookie holds cookieValue. A page shows a notice
// only with its browser's check value (CheckNotice): a link anyone can
// make must not have erpgate's own page say that something was done (a
// token revoked, a sign-out everywhere) to a person who did nothing.
// notice should name the page's subject too (a site's id), so that the
// value says nothing of another.
func NoticeCheck(cookieValue, notice string) string {
	return CSRFToken(cookieValue, "notice\x00"+notice)
}

// CheckNotice reports whether presented is NoticeCheck's value for the
// cookie and notice.
func CheckNotice(cookieValue, notice, presented string) bool {
	return CheckCSRF(cookieValue, "notice\x00"+notice, presented)
}
