// Package web serves erpgate's own pages and probes: the landing page,
// /healthz (the process is up) and /readyz (the database answers and its
// migrations are current). Pages carry strict security headers.
package web

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// Deps are what the web layer needs from the rest of erpgate.
type Deps struct {
	// Ready reports whether this replica can serve: nil when it can.
	Ready func(ctx context.Context) error
	// PublicURL builds an advertised URL from the configured base URL.
	PublicURL func(path string) string
	Version   string
}

// Register mounts the pages and probes on e.
func Register(e *echo.Echo, d Deps) {
	e.GET("/healthz", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		if err := d.Ready(ctx); err != nil {
			// The reason names the failing check, never connection details.
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "reason": readinessReason(err)})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
	})
	e.GET("/", func(c echo.Context) error {
		setPageHeaders(c.Response().Header())
		c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
		c.Response().WriteHeader(http.StatusOK)
		return landing.Execute(c.Response(), map[string]string{
			"Version":    d.Version,
			"ServiceMCP": d.PublicURL("/service/mcp"),
			"SiteMCP":    d.PublicURL("/sites/{slug}/mcp"),
			"OpenAPI":    d.PublicURL("/api/v1/openapi.json"),
		})
	})
}

// ReadinessError lets the ready check name what failed in a safe word.
type ReadinessError struct {
	Reason string
	Err    error
}

func (e *ReadinessError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *ReadinessError) Unwrap() error { return e.Err }

func readinessReason(err error) string {
	if re, ok := err.(*ReadinessError); ok {
		return re.Reason
	}
	return "not ready"
}

// setPageHeaders applies the headers every HTML page carries.
func setPageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

var landing = template.Must(template.New("landing").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>erpgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1d2330}code{background:#f1f3f7;padding:.1rem .3rem;border-radius:4px}</style>
</head>
<body>
<h1>erpgate</h1>
<p>erpgate lets AI assistants read your company's ERP safely, as the signed-in user. The ERP's own permissions decide what each person sees.</p>
<h2>Connect</h2>
<ul>
<li>People: add your site's MCP URL, <code>{{.SiteMCP}}</code>, to Claude, ChatGPT, Codex or VS Code. Your operator gives you the slug.</li>
<li>Bots: <code>{{.ServiceMCP}}</code> with the header <code>X-Erpgate-Service-Token</code>.</li>
<li>Operators: the admin API is described at <code>{{.OpenAPI}}</code>.</li>
</ul>
<p><small>erpgate {{.Version}}</small></p>
</body>
</html>
`))
