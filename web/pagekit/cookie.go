package pagekit

import (
	"crypto/rand"
	"encoding/base64"
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

// bindingMinLength is the shortest value a binding cookie may have: one
// this package made is 43 characters (32 random bytes).
const bindingMinLength = 32

// Binding returns the value of the browser-binding cookie name, when the
// request carries one: an unguessable value that ties state kept on the
// server (a sign-in, a registration) to the browser that began it, and
// keys the CSRF tokens of its forms.
func (k *Kit) Binding(r *http.Request, name string) (string, bool) {
	v, ok := k.ReadCookie(r, name)
	if !ok || len(v) < bindingMinLength {
		return "", false
	}
	return v, true
}

// EnsureBinding returns the request's binding value, or a new random one,
// and sets the cookie again to last maxAge.
func (k *Kit) EnsureBinding(w http.ResponseWriter, r *http.Request, name string, maxAge time.Duration) string {
	v, ok := k.Binding(r, name)
	if !ok {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
		v = base64.RawURLEncoding.EncodeToString(b)
	}
	http.SetCookie(w, k.Cookie(name, v, maxAge))
	return v
}
