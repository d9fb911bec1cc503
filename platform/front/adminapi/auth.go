package adminapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// requireAdmin lets a request through only with "Authorization: Bearer
// <ADMIN_TOKEN>". The comparison takes the same time whatever the presented
// token, so response timing does not reveal how much of it was right.
func (a *API) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		presented, ok := bearerToken(c.Request())
		switch {
		case !ok:
			return newError(http.StatusUnauthorized, codeUnauthorized,
				"this route needs the header Authorization: Bearer <ADMIN_TOKEN>")
		case !a.deps.AdminToken.IsSet() || !secrets.ConstantTimeEqual(presented, a.deps.AdminToken.Reveal()):
			return newError(http.StatusUnauthorized, codeUnauthorized, "the admin token is not valid")
		}
		return next(c)
	}
}

// RequireAdminToken is requireAdmin for a route outside the admin API
// (/metrics on the main address): the same header and comparison, and a
// plain 401 without the API's error body.
func RequireAdminToken(token secrets.Secret) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			presented, ok := bearerToken(c.Request())
			if !ok || !token.IsSet() || !secrets.ConstantTimeEqual(presented, token.Reveal()) {
				c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="erpgate-admin"`)
				return c.JSON(http.StatusUnauthorized, map[string]string{"message": "this route needs the header Authorization: Bearer <ADMIN_TOKEN>"})
			}
			return next(c)
		}
	}
}

// bearerToken returns the token of an "Authorization: Bearer ..." header.
// The scheme is case-insensitive (RFC 9110 section 11.1).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, found := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}
