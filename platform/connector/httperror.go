package connector

import (
	"net/http"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// StatusCode is the tool error code for an ERP's unsuccessful HTTP status:
//
//	401                     AUTH_EXPIRED (sign in again, or renew the credential)
//	403                     PERMISSION_DENIED
//	404                     NOT_FOUND
//	400, 409, 417, 422      INVALID_ARGUMENT (the ERP refused what was asked)
//	429                     RATE_LIMITED
//	408, 504                UPSTREAM_TIMEOUT
//	other 5xx               UPSTREAM_UNAVAILABLE
//	anything else           UPSTREAM_INVALID_RESPONSE (redirects, 405, 410, ...)
//
// A connector whose ERP gives a status another meaning (Acumatica's HTTP
// 500 for "no such record") decides those cases itself first.
func StatusCode(status int) toolerr.Code {
	switch {
	case status == http.StatusUnauthorized:
		return toolerr.AuthExpired
	case status == http.StatusForbidden:
		return toolerr.PermissionDenied
	case status == http.StatusNotFound:
		return toolerr.NotFound
	case status == http.StatusBadRequest, status == http.StatusConflict,
		status == http.StatusExpectationFailed, status == http.StatusUnprocessableEntity:
		return toolerr.InvalidArgument
	case status == http.StatusTooManyRequests:
		return toolerr.RateLimited
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return toolerr.UpstreamTimeout
	case status >= 500 && status <= 599:
		return toolerr.UpstreamUnavailable
	}
	return toolerr.UpstreamInvalidResponse
}

// HTTPError is the tool error for an ERP's unsuccessful answer with that
// HTTP status: StatusCode's code, message as the model reads it (say what
// happened in the ERP's words and what to change; never a body verbatim or
// a secret), and retryAfter, when positive, as the retry hint.
func HTTPError(status int, message string, retryAfter time.Duration) *toolerr.Error {
	e := &toolerr.Error{Code: StatusCode(status), Message: message}
	if retryAfter > 0 {
		e.RetryAfter = retryAfter
	}
	return e
}
