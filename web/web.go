// Package web serves erpgate's own pages and probes: the landing page, the
// tool reference and the page kit's stylesheet, /healthz and /health (the process is up) and /readyz (the
// database answers and its migrations are current). Pages are made with
// web/pagekit, which gives them their layout and security headers.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/web/clientsetup"
	"github.com/erpgate/erpgate/web/pagekit"
)

// Deps are what the web layer needs from the rest of erpgate.
type Deps struct {
	// Ready reports whether this replica can serve: nil when it can.
	Ready func(ctx context.Context) error
	// PublicURL builds an advertised URL from the configured base URL.
	PublicURL func(path string) string
	Version   string
	// Registration says that self-service registration (/register) is
	// served, so the landing page links it.
	Registration bool
	// Tools is every connector's catalogue, for the tool reference
	// (ToolsPath).
	Tools []ToolKind
}

// Register mounts the pages and probes on e.
func Register(e *echo.Echo, d Deps) {
	alive := func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
	e.GET("/healthz", alive)
	// /health is the same probe where the systems erpgate replaces
	// (MCP4Acumatica, NexWave MCP) served theirs, so their monitors keep
	// working.
	e.GET("/health", alive)
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
	kit, err := pagekit.New(d.PublicURL(""))
	if err != nil {
		// The configuration has checked the public base URL already.
		panic(fmt.Sprintf("web: %v", err))
	}
	landing := kit.MustParse(pageFiles, "templates/landing.html")
	stylesheet := echo.WrapHandler(pagekit.StylesheetHandler())
	e.GET(pagekit.StylesheetPath, stylesheet)
	e.HEAD(pagekit.StylesheetPath, stylesheet)
	script := echo.WrapHandler(pagekit.ScriptHandler())
	e.GET(pagekit.ScriptPath, script)
	e.HEAD(pagekit.ScriptPath, script)
	// A person who opens an address erpgate does not have gets the kit's
	// error page; programs (no text/html in Accept) keep echo's JSON 404.
	e.RouteNotFound("/*", func(c echo.Context) error {
		if !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
			return echo.ErrNotFound
		}
		return kit.RenderError(c.Response(), http.StatusNotFound, pagekit.ErrorPage{
			Title:   "There is no page at this address",
			Message: "The address may be mistyped, or the page may have moved.",
			Next:    "Check the address, or start from erpgate's home page.",
		})
	})
	registerTools(e, kit, d.Tools)
	register := ""
	if d.Registration {
		register = d.PublicURL("/register")
	}
	e.GET("/", func(c echo.Context) error {
		return kit.Render(c.Response(), http.StatusOK, landing, landingPage{
			Version:    d.Version,
			SiteMCP:    d.PublicURL("/sites/<slug>/mcp"),
			GenericMCP: d.PublicURL("/mcp"),
			ServiceMCP: d.PublicURL("/service/mcp"),
			OpenAPI:    d.PublicURL("/api/v1/openapi.json"),
			Tools:      d.PublicURL(ToolsPath),
			Clients:    clientsetup.HTML(d.PublicURL("/sites/<slug>/mcp")),
			Register:   register,
		}, pagekit.Options{})
	})
}

// The landing page's markup.
//
//go:embed templates/*.html
var pageFiles embed.FS

// landingPage is what the landing page shows; every URL is built from the
// public base URL.
type landingPage struct {
	Version    string
	SiteMCP    string // a site's MCP URL, with <slug> to fill in
	GenericMCP string // /mcp, where the user types their ERP's address
	ServiceMCP string
	OpenAPI    string
	// Tools is the tool reference.
	Tools string
	// Clients is the set-up of every AI client, for SiteMCP.
	Clients template.HTML
	// Register is the self-service registration page; empty when the
	// operator turned registration off.
	Register string
}

// ReadinessError lets the ready check name what failed in a safe word.
type ReadinessError struct {
	Reason string
	Err    error
}

func (e *ReadinessError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *ReadinessError) Unwrap() error { return e.Err }

func readinessReason(err error) string {
	if re := (*ReadinessError)(nil); errors.As(err, &re) {
		return re.Reason
	}
	return "not ready"
}
