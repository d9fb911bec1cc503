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
var stylesheetVersion = versionOf(stylesheet)

// ScriptPath is where the kit's one script is served (copy buttons: a
// button with data-copy="<element id>" copies that element's text). web
// mounts ScriptHandler there; a page that uses it renders with
// Options.Script and includes it with {{script}}.
const ScriptPath = "/assets/erpgate.js"

//go:embed assets/erpgate.js
var script []byte

var scriptVersion = versionOf(script)

func versionOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// StylesheetHandler serves the stylesheet.
func StylesheetHandler() http.Handler {
	return assetHandler("text/css; charset=utf-8", stylesheet, stylesheetVersion)
}

// ScriptHandler serves the script.
func ScriptHandler() http.Handler {
	return assetHandler("text/javascript; charset=utf-8", script, scriptVersion)
}

func assetHandler(contentType string, body []byte, version string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("v") == version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		h.Set("ETag", `"`+version+`"`)
		if r.Header.Get("If-None-Match") == `"`+version+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}
