package adminapi

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// openAPIDocument describes every route of this package. A test checks it
// against the routes Register adds, in both directions.
//
//go:embed openapi.json
var openAPIDocument []byte

// serveOpenAPI answers GET /openapi.json, without authentication.
func (a *API) serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIDocument)
}
