package pagekit

import (
	"net/http"
	"strings"
)

// CSP is the Content-Security-Policy of every page, before form-action:
// nothing loads but the stylesheet and images from erpgate itself (no
// script at all, no inline style), no <base> tag, and no framing, so the
// consent button cannot be clickjacked.
func (k *Kit) CSP(formAction []string) string {
	styles := "'self'"
	// The stylesheet's URL comes from the public base URL; should a page
	// be opened under another host name, the style still loads.
	styles += " " + k.origin
	fa := "'none'"
	if len(formAction) > 0 {
		fa = strings.Join(formAction, " ")
	}
	return "default-src 'none'; style-src " + styles + "; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action " + fa
}

// SetHeaders sets the headers of every page: the policy, no framing, no
// sniffing, no caching. Referrer-Policy is same-origin, not no-referrer:
// that keeps the Origin header on erpgate's own form posts (no-referrer
// turns it into "null"), which the form checks compare.
func (k *Kit) SetHeaders(h http.Header, opts Options) {
	h.Set("Content-Security-Policy", k.CSP(opts.FormAction))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}
