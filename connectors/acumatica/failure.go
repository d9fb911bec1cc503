package acumatica

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// failureKind is what an unsuccessful Acumatica answer means.
type failureKind int

const (
	failOther          failureKind = iota
	failUnauthorized               // 401: the token is not accepted
	failForbidden                  // 403: the user's roles lack the form or inquiry
	failMissing                    // 404: no such entity, endpoint version, inquiry or tenant
	failNoEntity                   // 500 NoEntitySatisfiesTheCondition: no record has these keys
	failQuery                      // $filter (or another query option) rejected
	failSelect                     // 500 KeyNotFoundException: an unknown $select or $expand name
	failCannotOptimize             // 500 CannotOptimizeException: the list cannot run as one query
	failThrottled                  // 429: the licence's request queue is full
	failLoginLimit                 // every API-user seat is taken
	failSignIn                     // redirected to the sign-in page
	failRedirect                   // any other redirect
	failBadRequest                 // 400 not about the query
	failServer                     // other 5xx
	failCredentials                // 500 PXException "Invalid credentials": the user's credentials no longer sign in
	failSetup                      // 500 PXSetupNotEnteredException: the tenant's required configuration is missing
	failBusy                       // 409: a long operation holds the form in this session; the request did not run
)

// failure is a parsed unsuccessful answer.
type failure struct {
	kind   failureKind
	status int
	// detail is Acumatica's own message, cleaned for a model: one line, no
	// stack trace, bounded.
	detail string
	// exceptionType is the short .NET exception name, when Acumatica gave one.
	exceptionType string
	// screen is the form id a 403 names ("AR301000").
	screen     string
	retryAfter time.Duration
}

// acumaticaError covers both error bodies: the contract API's ASP.NET
// HttpError and OData v4's {"error":{"code","message"}}.
type acumaticaError struct {
	Message          string `json:"message"`
	ExceptionMessage string `json:"exceptionMessage"`
	ExceptionType    string `json:"exceptionType"`
	Error            *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var (
	// "You have insufficient rights to access the object (AR301000)." and
	// "You have insufficient rights to access the Customers (AR303000) form."
	insufficientRights = regexp.MustCompile(`(?i)insufficient rights to access the (.*?)\s*\(([A-Z]{2}[0-9A-Z]{4,8})\)`)
	// The words of the OData libraries' $filter complaints.
	queryComplaint = regexp.MustCompile(`(?i)syntax error|unterminated|unknown function|could not find a property|not supported|incompatible types|literal|\$filter|no function signature|unrecognized|single boolean|query specified in the uri|not a primitive property|parameter '|is not allowed|not in scope`)
	loginLimit     = regexp.MustCompile(`(?i)api login limit|concurrent api logins|number of concurrent api`)
	// PXLogin's refusal, "Error: Invalid credentials. Please try again.",
	// which Acumatica sends with HTTP 500 (issue 15 item 7).
	invalidCredentials = regexp.MustCompile(`(?i)\binvalid credentials\b`)
)

// credentialsRefused reports whether an answer is PXLogin refusing the
// user's credentials (HTTP 500 with a PXException, or the same text on the
// token endpoint), and returns Acumatica's message cleaned for a model.
// It is an authentication failure, not an outage: the credentials will
// not work a moment later either.
func credentialsRefused(status int, body []byte) (string, bool) {
	if status < 500 {
		return "", false
	}
	var e acumaticaError
	_ = json.Unmarshal(body, &e)
	msg := e.ExceptionMessage
	if msg == "" {
		msg = e.Message
	}
	if !invalidCredentials.MatchString(msg) {
		return "", false
	}
	return cleanDetail(msg), true
}

// parseFailure classifies an unsuccessful answer (classifyFailure). Its
// message goes to the model and the operator: an answer that quotes the
// access token the request carried (in its body or the Location it
// redirects to) has it withheld.
func parseFailure(r response, withQuery bool) failure {
	f := classifyFailure(r, withQuery)
	if r.sent != "" && (quotesSent(f.detail, r.body, r.sent) || strings.Contains(r.location, r.sent)) {
		f.detail = withheldDetail
	}
	return f
}

// classifyFailure classifies an unsuccessful answer. withQuery says whether
// the request carried $filter or similar options a rejection may be about.
func classifyFailure(r response, withQuery bool) failure {
	var body acumaticaError
	_ = json.Unmarshal(r.body, &body)
	msg := body.ExceptionMessage
	if msg == "" && body.Error != nil {
		msg = body.Error.Message
	}
	if msg == "" {
		msg = body.Message
	}
	if msg == "" && !json.Valid(r.body) {
		// IIS and other proxies answer with plain text or HTML.
		msg = string(r.body)
	}
	f := failure{status: r.status, detail: cleanDetail(msg), exceptionType: shortType(body.ExceptionType)}
	if _, ok := credentialsRefused(r.status, r.body); ok {
		f.kind = failCredentials
		return f
	}
	switch {
	case r.status >= 300 && r.status <= 399:
		f.kind = failRedirect
		if u, err := url.Parse(r.location); err == nil {
			text := u.Query().Get("message") + " " + u.Query().Get("exceptionID")
			switch {
			case loginLimit.MatchString(text):
				f.kind, f.detail = failLoginLimit, cleanDetail(u.Query().Get("message"))
			case strings.Contains(strings.ToLower(u.Path), "login"):
				f.kind = failSignIn
			}
		}
	case r.status == http.StatusUnauthorized:
		f.kind = failUnauthorized
	case r.status == http.StatusForbidden:
		f.kind = failForbidden
		if m := insufficientRights.FindStringSubmatch(msg); m != nil {
			f.screen = strings.ToUpper(m[2])
		}
	case r.status == http.StatusNotFound:
		f.kind = failMissing
	case r.status == http.StatusConflict:
		// 25.200.001 documents 409 on every operation with one meaning:
		// "A long operation is running for this screen in the current
		// session. Please try again later." The form refused the request
		// before running it.
		f.kind = failBusy
		f.retryAfter = outbound.ParseRetryAfter(r.header.Get("Retry-After"), time.Now())
	case r.status == http.StatusTooManyRequests:
		f.kind = failThrottled
		f.retryAfter = outbound.ParseRetryAfter(r.header.Get("Retry-After"), time.Now())
		if loginLimit.MatchString(msg) {
			f.kind = failLoginLimit
		}
	case loginLimit.MatchString(msg):
		f.kind = failLoginLimit
	case strings.Contains(body.ExceptionType, "PXSetupNotEnteredException"):
		f.kind = failSetup
	case strings.Contains(body.ExceptionType, "NoEntitySatisfiesTheCondition") || strings.Contains(msg, "No entity satisfies the condition"):
		f.kind = failNoEntity
	case strings.Contains(body.ExceptionType, "CannotOptimizeException"):
		f.kind = failCannotOptimize
	case strings.Contains(body.ExceptionType, "KeyNotFoundException"):
		f.kind = failSelect
	case withQuery && (r.status == http.StatusBadRequest || r.status == http.StatusInternalServerError) &&
		(strings.Contains(body.ExceptionType, "OData") || queryComplaint.MatchString(msg)):
		f.kind = failQuery
	case r.status == http.StatusBadRequest:
		f.kind = failBadRequest
	case r.status >= 500:
		f.kind = failServer
	}
	return f
}

// cleanDetail makes an upstream message safe and short for a model: one
// line of at most 300 characters, never a stack trace.
func cleanDetail(s string) string {
	if i := strings.Index(s, "   at "); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if strings.HasPrefix(s, "<") {
		// An HTML page says nothing a model can use.
		return ""
	}
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

// shortType is the last part of a .NET exception type name.
func shortType(t string) string {
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// asToolErr returns err's *toolerr.Error, if it has one.
func asToolErr(err error) *toolerr.Error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te
	}
	return nil
}
