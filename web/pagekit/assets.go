package pagekit

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
)

// StylesheetPath is where the stylesheet is served; web mounts
// StylesheetHandler there.
const StylesheetPath = "/assets/erpgate.css"

//go:embed assets/erpgate.css
var stylesheet []byte

// stylesheetVersion changes with the stylesheet, so a page links to the
// version it was made with and browsers may cache it for good.
var stylesheetVersion = func() string {
	sum := sha256.Sum256(stylesheet)
	return hex.EncodeToString(sum[:6])
}()

// StylesheetHandler serves the stylesheet.
func StylesheetHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/css; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("v") == stylesheetVersion {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		h.Set("ETag", `"`+stylesheetVersion+`"`)
		if r.Header.Get("If-None-Match") == `"`+stylesheetVersion+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(stylesheet)
	})
}
