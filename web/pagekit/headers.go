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
	return k.policy(Options{FormAction: formAction})
}

// policy is the Content-Security-Policy of a page with opts. Only a page
// that asks for it (Options.Script) may run a script, and only the kit's
// own script file: never an inline one.
func (k *Kit) policy(opts Options) string {
	// The stylesheet's and script's URLs come from the public base URL;
	// should a page be opened under another host name, they still load.
	self := "'self' " + k.origin
	fa := "'none'"
	if len(opts.FormAction) > 0 {
		fa = strings.Join(opts.FormAction, " ")
	}
	script := ""
	if opts.Script {
		script = "script-src " + self + "; "
	}
	return "default-src 'none'; " + script + "style-src " + self + "; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action " + fa
}

// SetHeaders sets the headers of every page: the policy, no framing, no
// sniffing, no caching. Referrer-Policy is same-origin, not no-referrer:
// that keeps the Origin header on erpgate's own form posts (no-referrer
// turns it into "null"), which the form checks compare.
func (k *Kit) SetHeaders(h http.Header, opts Options) {
	h.Set("Content-Security-Policy", k.policy(opts))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}
