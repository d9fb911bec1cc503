package pagekit

import (
	"net/http"
	"time"
)

// CookieName is the name a cookie is set under. Over https it is a
// __Host- cookie: Secure, host-only, Path=/, so no sibling subdomain can
// set or shadow it. Browsers refuse Secure cookies on plain-http pages
// (and a __Host- cookie must be Secure), so in development, erpgate
// served over http on loopback or a development host, the plain name is
// used.
func (k *Kit) CookieName(name string) string {
	if k.secure {
		return "__Host-" + name
	}
	return name
}

// Cookie is a cookie of erpgate's pages: HttpOnly, Path=/, host-only,
// Secure over https, and SameSite=Lax (not Strict, because a person comes
// back from their ERP by a cross-site top-level redirect, which must carry
// it). A zero maxAge deletes it.
func (k *Kit) Cookie(name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{
		Name:     k.CookieName(name),
		Value:    value,
		Path:     "/",
		MaxAge:   int(maxAge.Seconds()),
		HttpOnly: true,
		Secure:   k.secure,
		SameSite: http.SameSiteLaxMode,
	}
	if maxAge <= 0 {
		c.MaxAge, c.Value = -1, ""
	}
	return c
}

// ReadCookie returns the value of the named cookie, when the request
// carries it under this kit's name.
func (k *Kit) ReadCookie(r *http.Request, name string) (string, bool) {
	c, err := r.Cookie(k.CookieName(name))
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}
