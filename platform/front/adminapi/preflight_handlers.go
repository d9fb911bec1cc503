package adminapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
)

// preflightView is a site's preflight result.
type preflightView struct {
	RanAt  time.Time                  `json:"ran_at"`
	Passed bool                       `json:"passed"`
	Checks []connector.PreflightCheck `json:"checks"`
}

func preflightViewOf(p siteadmin.Preflight) preflightView {
	checks := p.Checks
	if checks == nil {
		checks = []connector.PreflightCheck{}
	}
	return preflightView{RanAt: p.RanAt.UTC(), Passed: p.Passed, Checks: checks}
}

// runPreflight answers POST /sites/{id}/preflight: it runs every check
// now, stores the result and returns it. Failed checks are a result (200
// with passed false), not an error.
func (a *API) runPreflight(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	p, err := a.layer.RunPreflight(c.Request().Context(), siteadmin.Operator, site)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, preflightViewOf(p))
}

// getPreflight answers GET /sites/{id}/preflight: the last result.
func (a *API) getPreflight(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	p, err := a.layer.LastPreflight(c.Request().Context(), site)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, preflightViewOf(p))
}
