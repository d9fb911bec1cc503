package adminapi

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// auditSiteKey is the echo context key under which handlers leave the site
// an action concerned, for the audit line.
const auditSiteKey = "adminapi.site"

// auditSite records, for the audit line, which site the request concerns.
func auditSite(c echo.Context, site sites.Site) {
	c.Set(auditSiteKey, site)
}

// audit logs one line per admin action (event=admin_action): the action,
// the site it concerned when known, the outcome, the status and, for
// failures, the error code. It never logs request bodies, headers, tokens or
// credentials.
func (a *API) audit(action string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			fields := []zap.Field{zap.String("event", "admin_action"), zap.String("action", action)}
			if site, ok := c.Get(auditSiteKey).(sites.Site); ok {
				fields = append(fields, zap.String("site_id", site.ID.String()), zap.String("site_slug", site.Slug))
			}
			if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
				fields = append(fields, zap.String("request_id", id))
			}
			if err == nil {
				status := c.Response().Status
				if status == 0 {
					status = http.StatusOK
				}
				fields = append(fields, zap.String("outcome", "success"), zap.Int("status", status))
			} else {
				ae := classify(err)
				fields = append(fields, zap.String("outcome", "error"), zap.Int("status", ae.Status), zap.String("error_code", ae.Code))
			}
			a.log.Info("admin action", fields...)
			return err
		}
	}
}
