// Package pagekit is what every erpgate page is made with: templates from
// embedded files inside one layout, one Content-Security-Policy with the
// other security headers, the stylesheet (served from the binary), cookie
// and CSRF helpers, and the one error page people see.
//
// It is a leaf: it imports nothing of erpgate's, so authserver, web and
// later pages can all use it without the import rules bending
// (cmd/erpgate/architecture_test.go).
//
// Pages use no JavaScript and no inline styles: the policy allows styles
// from erpgate's own origin only, and no scripts at all.
package pagekit
