package adminapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// Error codes. They are part of the API: clients may switch on them.
const (
	codeInvalidRequest      = "invalid_request"
	codeUnauthorized        = "unauthorized"
	codeNotFound            = "not_found"
	codeMethodNotAllowed    = "method_not_allowed"
	codeConflict            = "conflict"
	codeCredentialRejected  = "credential_rejected"
	codeUpstreamUnreachable = "upstream_unreachable"
	codeInternal            = "internal"
	codeUnavailable         = "unavailable"
)

// apiError is a failure with the status, code and message the client sees.
// Message is written for an operator and never contains a secret; Err is the
// cause, for the server log only.
type apiError struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *apiError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func (e *apiError) Unwrap() error { return e.Err }

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, codeInvalidRequest, format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, codeNotFound, format, args...)
}

func conflict(format string, args ...any) *apiError {
	return newError(http.StatusConflict, codeConflict, format, args...)
}

// internal hides cause from the client; the envelope logs it. A database
// outage is told apart (503), since retrying later is then the right move.
func internal(cause error) *apiError {
	if errors.Is(cause, database.ErrUnavailable) {
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message: "erpgate's database is unavailable; try again shortly", Err: cause}
	}
	return &apiError{Status: http.StatusInternalServerError, Code: codeInternal,
		Message: "an internal error stopped this request; the server log has details", Err: cause}
}

// errorBody is the JSON every error response carries.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify turns any error a handler returns into an *apiError. Handlers
// return *apiError for everything they expect; the cases below are the
// fall-backs for store errors nobody translated and for echo's own errors.
func classify(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	var se *siteadmin.Error
	if errors.As(err, &se) {
		return fromLayerError(se)
	}
	var ve *sites.ValidationError
	if errors.As(err, &ve) {
		return &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: ve.Message, Err: err}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return fromEchoError(he)
	}
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: codeNotFound, Message: "the resource does not exist", Err: err}
	case errors.Is(err, sites.ErrConflict):
		return &apiError{Status: http.StatusConflict, Code: codeConflict, Message: "the change conflicts with an existing resource", Err: err}
	}
	return internal(err)
}

func fromEchoError(he *echo.HTTPError) *apiError {
	switch he.Code {
	case http.StatusNotFound:
		return notFound("no such route")
	case http.StatusMethodNotAllowed:
		return newError(http.StatusMethodNotAllowed, codeMethodNotAllowed, "this route does not support the method")
	case http.StatusUnauthorized:
		return newError(http.StatusUnauthorized, codeUnauthorized, "a valid admin bearer token is required")
	case http.StatusRequestEntityTooLarge:
		return newError(he.Code, codeInvalidRequest, "the request body is too large")
	}
	if he.Code >= 400 && he.Code < 500 {
		return &apiError{Status: he.Code, Code: codeInvalidRequest, Message: http.StatusText(he.Code), Err: he}
	}
	return internal(he)
}

// envelope is the outermost middleware of every route: it marks responses
// uncacheable and writes every error as {"error":{"code","message"}}.
func (a *API) envelope(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		err := next(c)
		if err == nil {
			return nil
		}
		ae := classify(err)
		if ae.Status >= http.StatusInternalServerError {
			level := zap.ErrorLevel
			if ae.Status != http.StatusInternalServerError {
				level = zap.WarnLevel // the ERP or the database, not erpgate
			}
			a.log.Log(level, "admin request failed",
				zap.String("method", c.Request().Method), zap.String("route", c.Path()),
				zap.Int("status", ae.Status), zap.String("error_code", ae.Code),
				// An ERP's failure may name an address with a credential
				// in it (a refused redirect's Location, a request's query).
				zap.Error(outbound.BareURLs(ae.Err)))
		}
		if c.Response().Committed {
			return nil
		}
		if ae.Status == http.StatusUnauthorized {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="erpgate admin API"`)
		}
		if werr := c.JSON(ae.Status, errorBody{Error: errorDetail{Code: ae.Code, Message: ae.Message}}); werr != nil {
			a.log.Warn("admin error response not written", zap.Error(werr))
		}
		return nil
	}
}

// layerStatus is the HTTP status of each kind of site-administration
// failure; the kind's name is the error code.
var layerStatus = map[siteadmin.Kind]int{
	siteadmin.Invalid:     http.StatusBadRequest,
	siteadmin.NotFound:    http.StatusNotFound,
	siteadmin.Conflict:    http.StatusConflict,
	siteadmin.Rejected:    http.StatusUnprocessableEntity,
	siteadmin.Unreachable: http.StatusBadGateway,
}

func fromLayerError(se *siteadmin.Error) *apiError {
	status, ok := layerStatus[se.Kind]
	if !ok {
		return internal(se.Err)
	}
	return &apiError{Status: status, Code: string(se.Kind), Message: se.Message, Err: se.Err}
}
