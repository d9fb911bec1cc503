package frappetest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
)

// apiError is a Frappe exception on its way to the client. Its body is
// built like frappe.utils.response.report_error: keys exception, exc_type,
// exc, _server_messages, _error_message in that order, compact outer JSON.
type apiError struct {
	status    int
	excType   string // class name, e.g. "DataError"
	excPath   string // dotted class path, e.g. "frappe.exceptions.DataError"
	message   string // str(exception); "" for a bare raise
	traceback bool   // include "exception" and "exc" (404s never do)
	messages  []*object
	errorMsg  string  // _error_message
	lead      *object // keys placed before the error keys (login "message")
}

func (e *apiError) Error() string { return e.excType + ": " + e.message }

// exceptionLine is the last traceback line: "module.Class: message".
func (e *apiError) exceptionLine() string {
	if e.message == "" {
		return e.excPath
	}
	return e.excPath + ": " + e.message
}

func (e *apiError) body() *object {
	o := newObject(6)
	if e.lead != nil {
		for i, k := range e.lead.keys {
			o.set(k, e.lead.vals[i])
		}
	}
	if e.traceback {
		o.set("exception", e.exceptionLine())
	}
	o.set("exc_type", e.excType)
	if e.traceback {
		tb := "Traceback (most recent call last):\n  File \"apps/frappe/frappe/app.py\", line 114, in application\n" +
			"    response = frappe.api.handle(request)\n  ...\n" + e.exceptionLine() + "\n"
		o.set("exc", string(pyJSONSpaced([]any{tb})))
	}
	if len(e.messages) > 0 {
		list := make([]any, len(e.messages))
		for i, m := range e.messages {
			list[i] = string(pyJSONSpaced(m))
		}
		o.set("_server_messages", string(pyJSONSpaced(list)))
	}
	if e.errorMsg != "" {
		o.set("_error_message", e.errorMsg)
	}
	return o
}

func (e *apiError) write(w http.ResponseWriter) {
	writeJSONResponse(w, e.status, e.body())
}

func writeJSONResponse(w http.ResponseWriter, status int, body any) {
	b := pyJSON(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// excID returns a fresh __frappe_exc_id (56 hex characters).
func excID() string {
	b := make([]byte, 28)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// throwMessage is the message_log entry frappe.throw adds.
func throwMessage(msg, title string) *object {
	if title == "" {
		title = "Message"
	}
	o := newObject(5)
	o.set("message", msg)
	o.set("title", title)
	o.set("indicator", "red")
	o.set("raise_exception", 1)
	o.set("__frappe_exc_id", excID())
	return o
}

// printMessage is a plain frappe.msgprint entry.
func printMessage(msg string) *object {
	o := newObject(2)
	o.set("message", msg)
	o.set("title", "Message")
	return o
}

// statusOf maps Frappe exception classes to HTTP status codes.
var statusOf = map[string]int{
	"ValidationError": 417, "DataError": 417, "DoesNotExistError": 404,
	"PermissionError": 403, "AuthenticationError": 401, "InvalidAuthorizationToken": 400,
	"DuplicateEntryError": 409, "RateLimitExceededError": 429, "SessionStopped": 503,
}

// frappeThrow is frappe.throw(msg, exc=cls): HTTP status from the class,
// traceback (except for 404), one red message.
func frappeThrow(cls, msg, title string) *apiError {
	st := statusOf[cls]
	if st == 0 {
		st = 417
	}
	return &apiError{status: st, excType: cls, excPath: "frappe.exceptions." + cls, message: msg,
		traceback: st != 404, messages: []*object{throwMessage(msg, title)}}
}

// dataError is the 417 DataError used for invalid fields.
func dataError(msg string) *apiError { return frappeThrow("DataError", msg, "") }

// validationError is the 417 ValidationError.
func validationError(msg string) *apiError { return frappeThrow("ValidationError", msg, "") }

// fieldNotPermitted is reportview.raise_invalid_field.
func fieldNotPermitted(f string) *apiError { return dataError("Field not permitted in query: " + f) }

// notFound is DoesNotExistError with a message (404, no traceback).
func notFound(msg string) *apiError { return frappeThrow("DoesNotExistError", msg, "") }

// doctypeNotFound is frappe.get_meta on an unknown DocType.
func doctypeNotFound(dt string) *apiError { return notFound("DocType " + dt + " not found") }

// routeNotFound is the bare 404 for an unmatched /api path.
func routeNotFound() *apiError {
	return &apiError{status: 404, excType: "DoesNotExistError", excPath: "frappe.exceptions.DoesNotExistError"}
}

// bareError is a Frappe exception raised without a message.
func bareError(cls string) *apiError {
	return &apiError{status: statusOf[cls], excType: cls, excPath: "frappe.exceptions." + cls, traceback: true}
}

// pythonError is a non-Frappe exception (HTTP 500 unless given).
func pythonError(path, msg string) *apiError {
	cls := path
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			cls = path[i+1:]
			break
		}
	}
	return &apiError{status: 500, excType: cls, excPath: path, message: msg, traceback: true}
}

// sqlError is a MariaDB error surfacing as pymysql OperationalError (500).
func sqlError(code int, msg string) *apiError {
	return pythonError("pymysql.err.OperationalError", "("+strconv.Itoa(code)+", "+pyStrRepr(msg)+")")
}

// sqlSyntaxError is a MariaDB 1064 syntax error (ProgrammingError, 500).
func sqlSyntaxError(near string) *apiError {
	return pythonError("pymysql.err.ProgrammingError", "(1064, "+pyStrRepr("You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '"+near+"' at line 1")+")")
}

// listPermissionError is the doctype-level denial (sample 11).
func listPermissionError(user, doctype string) *apiError {
	e := bareError("PermissionError")
	e.messages = []*object{printMessage("User <strong>" + user + "</strong> does not have doctype access via role permission for document <strong>" + doctype + "</strong>")}
	e.errorMsg = "No permission for " + doctype
	return e
}

// docPermissionError is the document-level denial on GET (sample 12).
func docPermissionError(user, doctype, name string, hasDoctypeRead bool) *apiError {
	e := bareError("PermissionError")
	msg := "User <strong>" + user + "</strong> does not have access to this document"
	if hasDoctypeRead {
		msg += ": " + doctype + " - " + name
	} else {
		msg = "User <strong>" + user + "</strong> does not have doctype access via role permission for document <strong>" + doctype + "</strong>"
	}
	e.messages = []*object{printMessage(msg)}
	return e
}

// methodNotAllowedForGuest is handler.is_whitelisted's Guest denial.
func methodNotAllowedForGuest(method string) *apiError {
	msg := "<details><summary>You are not permitted to access this resource.</summary>Function <strong>" + method + "</strong> is not whitelisted.</details>"
	return frappeThrow("PermissionError", msg, "Method Not Allowed")
}
