package adminapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// routeNotFound answers requests under /api/v1 that match no route. Echo's
// group catch-all also catches a known path with an unsupported method, so
// this tells the two apart itself: 405 with Allow, or 404.
func (a *API) routeNotFound(c echo.Context) error {
	path := c.Request().URL.Path
	var allowed []string
	for _, r := range a.routes {
		if matchTemplate(r.path, path) && !slices.Contains(allowed, r.method) {
			allowed = append(allowed, r.method)
		}
	}
	if len(allowed) == 0 {
		return notFound("no route %s %s; the API is described at its openapi.json", c.Request().Method, toolerr.Quote(path))
	}
	slices.Sort(allowed)
	c.Response().Header().Set(echo.HeaderAllow, strings.Join(allowed, ", "))
	return newError(http.StatusMethodNotAllowed, codeMethodNotAllowed,
		"%s is not supported on this route; use %s", c.Request().Method, strings.Join(allowed, ", "))
}

// matchTemplate reports whether path fits an echo route template, where a
// segment starting with ":" matches any one non-empty segment.
func matchTemplate(template, path string) bool {
	ts := strings.Split(template, "/")
	ps := strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, ":") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if t != ps[i] {
			return false
		}
	}
	return true
}
