package acumaticatest

import (
	"html"
	"net/http"
	"strconv"
	"strings"
)

const jsonContentType = "application/json; charset=utf-8"

// writeJSON writes a JSON body with Acumatica's content type and, as IIS
// sends a buffered Web API answer (testdata/samples/*-list-*.meta.json),
// its length: not in chunks.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", jsonContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// httpError is ASP.NET Web API's HttpError with only a message.
func httpError(message string) string {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("message", message)
	o.close()
	return b.String()
}

// exceptionError is the HttpError of an unhandled server exception
// (always HTTP 500 on the contract API).
func exceptionError(exMessage, exType, stackTrace string) string {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("message", "An error has occurred.")
	o.str("exceptionMessage", exMessage)
	o.str("exceptionType", exType)
	if stackTrace != "" {
		o.str("stackTrace", stackTrace)
	}
	o.close()
	return b.String()
}

// Error texts the contract API returns.
const (
	msgNotSignedIn = "Authorization has been denied for this request."
	msgNoEntity    = "No entity satisfies the condition."
	typeNoEntity   = "PX.Api.ContractBased.NoEntitySatisfiesTheConditionException"
	msgThrottled   = "The custom error module does not recognize this error."
	msgLoginLimit  = "API Login Limit"
	// msgInvalidCredentials is PXLogin's refusal (recorded on a cookie
	// login with a wrong password).
	msgInvalidCredentials    = "Error: Invalid credentials. Please try again."
	stackTraceFilter         = "   at PX.Api.ContractBased.OData.FilterParser.Parse(String filter)\r\n   at PX.Api.ContractBased.EntityService.GetList(EntityImpl entity, ODataQueryOptions options)"
	stackTraceCannotOptimize = "   at PX.Api.ContractBased.OptimizedExport.NotWorkingOptimizedExportProvider.get_CanOptimize()"
	stackTraceSelect         = "   at System.Collections.Generic.Dictionary`2.get_Item(TKey key)\r\n   at PX.Api.ContractBased.OptimizedExport.SelectBuilder.Build(EntityImpl entity, String select)"
)

// writeInvalidCredentials is PXLogin refusing a user's credentials: HTTP
// 500 with a PXException, on a cookie login, on a call whose session no
// longer signs in, and (Options.InvalidCredentials500) on the token
// endpoint.
func writeInvalidCredentials(w http.ResponseWriter) {
	writeJSON(w, http.StatusInternalServerError, exceptionError(msgInvalidCredentials, "PX.Data.PXException", "   at PX.Data.PXLogin.LoginUser(String& userName, String password)"))
}

func writeNotSignedIn(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", "Bearer")
	writeJSON(w, http.StatusUnauthorized, httpError(msgNotSignedIn))
}

// insufficientRights is the text Acumatica raises when a role lacks a
// form: "You have insufficient rights to access the object (AR301000)."
func insufficientRights(screen string) string {
	return "You have insufficient rights to access the object (" + screen + ")."
}

func writeForbidden(w http.ResponseWriter, screen string) {
	writeJSON(w, http.StatusForbidden, httpError(insufficientRights(screen)))
}

func writeNoEntity(w http.ResponseWriter) {
	writeJSON(w, http.StatusInternalServerError, exceptionError(msgNoEntity, typeNoEntity, ""))
}

func writeNotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, httpError("No HTTP resource was found that matches the request URI '"+requestURL(r)+"'."))
}

func writeMethodNotAllowed(w http.ResponseWriter, method string) {
	writeJSON(w, http.StatusMethodNotAllowed, httpError("The requested resource does not support http method '"+method+"'."))
}

// writeThrottled is the licence throttle's 429: IIS's custom-errors text,
// not JSON, and no Retry-After.
func writeThrottled(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(msgThrottled))
}

func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + pathPrefix(r) + r.URL.RequestURI()
}

// writeIISNotFound is IIS's own 404 for a path no application serves: an
// HTML page, not the API's JSON.
func writeIISNotFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>404 - File or directory not found.</title></head><body><h2>404 - File or directory not found.</h2></body></html>"))
}

// PathErrorPage is the site's error page, where the licence's API Login
// Limit redirects a Bearer call (writeLoginLimitRedirect).
const PathErrorPage = "/Frames/Error.aspx"

// writeFramesError is Frames/Error.aspx: an HTML page with the message of
// its query, served to anyone and answered 200. Acumatica's own
// Frames/Error.aspx.cs renders the "message" (or "exceptionID") parameter
// into labels, calls Server.ClearError and never sets a status code, and
// the site's authentication marks /Frames/Error.aspx anonymous (public
// copies of the site's Frames folder and its auth configuration, index
// files 612435269 and 43190422353). A client that follows the redirect
// therefore reads HTTP 200, not an error status.
func writeFramesError(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	msg := q.Get("message")
	if msg == "" {
		msg = q.Get("exceptionID")
	}
	writeHTML(w, http.StatusOK, `<!DOCTYPE html><html><head><title>Error has occurred</title></head><body><form id="form1"><div id="frmBottom">`+
		`<span id="lblMessage">`+html.EscapeString(msg)+`</span></div></form></body></html>`)
}
