package acumatica

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func acumaticaFault(prefix string, status int) acumaticatest.Fault {
	return acumaticatest.Fault{PathPrefix: prefix, Status: status,
		Body: `{"message":"An error has occurred.","exceptionMessage":"Boom","exceptionType":"System.InvalidOperationException","stackTrace":"   at X.Y()"}`}
}

func TestUpstreamFailuresAreNeverNoRecords(t *testing.T) {
	customers := "/entity/Default/24.200.001/Customer"
	list := map[string]any{"entity": "Customer", "top": 5}
	cases := []struct {
		name  string
		fault acumaticatest.Fault
		code  toolerr.Code
		want  []string
	}{
		{"empty 200", acumaticatest.Fault{PathPrefix: customers, Status: 200}, toolerr.UpstreamInvalidResponse, []string{"empty body", "does not mean there are no records"}},
		{"unreadable 200", acumaticatest.Fault{PathPrefix: customers, Status: 200, BodySize: 50}, toolerr.UpstreamInvalidResponse, []string{"could not be read", "does not mean there are no records"}},
		{"null 200", acumaticatest.Fault{PathPrefix: customers, Status: 200, Body: "null"}, toolerr.UpstreamInvalidResponse, []string{"null instead of an array", "does not mean there are no records"}},
		{"object 200", acumaticatest.Fault{PathPrefix: customers, Status: 200, Body: `{"value":[]}`}, toolerr.UpstreamInvalidResponse, []string{"could not be read", "does not mean there are no records"}},
		{"row not a record", acumaticatest.Fault{PathPrefix: customers, Status: 200, Body: `[{"id":"a"},"b"]`}, toolerr.UpstreamInvalidResponse, []string{"not a record", "does not mean there are no records"}},
		{"truncated array", acumaticatest.Fault{PathPrefix: customers, Status: 200, Body: `[{"id":"a","CustomerID":{"value":"C1"}},`}, toolerr.UpstreamInvalidResponse, []string{"could not be read", "does not mean there are no records"}},
		{"500", acumaticaFault(customers, 500), toolerr.UpstreamUnavailable, []string{"HTTP 500", "InvalidOperationException: Boom", "does not mean there are no records"}},
		{"429", acumaticatest.Fault{PathPrefix: customers, Status: 429, Body: "The custom error module does not recognize this error."}, toolerr.RateLimited, []string{"HTTP 429", "licence"}},
		{"429 with Retry-After", acumaticatest.Fault{PathPrefix: customers, Status: 429, Body: "x", RetryAfter: 7 * time.Second}, toolerr.RateLimited, []string{"wait 7 seconds"}},
		{"login limit", acumaticatest.Fault{PathPrefix: customers, Status: 500, Body: `{"message":"An error has occurred.","exceptionMessage":"API Login Limit","exceptionType":"PX.Data.PXException"}`}, toolerr.RateLimited, []string{"API-user seat"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{noRetry: true})
			h.userToken(kindFull.role)
			h.sim.SetFault(tc.fault)
			_, err := h.run(kindFull, "acumatica_list_entities", list)
			te := wantCode(t, err, tc.code, tc.name)
			for _, w := range tc.want {
				if !strings.Contains(te.Message, w) {
					t.Errorf("message lacks %q: %s", w, te.Message)
				}
			}
			if strings.Contains(te.Message, "X.Y()") {
				t.Error("a stack trace reached the message")
			}
			if tc.code == toolerr.RateLimited && te.RetryAfter <= 0 {
				t.Error("no retry-after")
			}
			if tc.fault.RetryAfter > 0 && te.RetryAfter != tc.fault.RetryAfter {
				t.Errorf("retry-after = %v, want %v", te.RetryAfter, tc.fault.RetryAfter)
			}
		})
	}
}

// Acumatica answers a bearer call beyond its licence's API logins with a
// redirect to an error page; that is a rate limit, not a missing entity.
func TestRedirectToTheLoginLimitPage(t *testing.T) {
	f := parseFailure(response{status: http.StatusFound,
		location: "/Frames/Error.aspx?exceptionID=API+Login+Limit&typeID=PX.Data.PXException&message=The+number+of+concurrent+API+logins+(2)+permitted+by+the+license+has+been+reached."}, false)
	if f.kind != failLoginLimit || !strings.Contains(f.detail, "concurrent API logins") {
		t.Fatalf("failure = %+v", f)
	}
	if f := parseFailure(response{status: http.StatusFound, location: "/Frames/Login.aspx?ReturnUrl=%2fentity"}, false); f.kind != failSignIn {
		t.Fatalf("login redirect = %+v", f)
	}
}

func TestForbiddenTextsName(t *testing.T) {
	for _, body := range []string{
		`{"message":"You have insufficient rights to access the object (AR301000)."}`,
		`{"message":"You have insufficient rights to access the Invoices and Memos (AR301000) form."}`,
	} {
		f := parseFailure(response{status: 403, body: []byte(body)}, false)
		if f.kind != failForbidden || f.screen != "AR301000" {
			t.Errorf("%s: %+v", body, f)
		}
	}
}

// A user whose sign-in ended gets AUTH_EXPIRED; a service connection
// whose token was refused renews it and carries on.
func TestRefusedTokens(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.mustRun(kindFull, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
	h.mustRun(kindService, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
	h.sim.ExpireTokens()
	_, err := h.run(kindFull, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
	te := wantCode(t, err, toolerr.AuthExpired, "expired user token")
	if !strings.Contains(te.Message, "sign in again") {
		t.Errorf("message = %s", te.Message)
	}
	refreshes := h.sim.RefreshCount()
	h.mustRun(kindService, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
	if h.sim.RefreshCount() != refreshes+1 {
		t.Errorf("the service token was not refreshed (refreshes %d → %d)", refreshes, h.sim.RefreshCount())
	}
	// A dead refresh token: the API user signs in afresh.
	h.sim.RevokeRefreshTokens(h.sim.User(acumaticatest.RoleService).Username)
	h.sim.ExpireTokens()
	h.mustRun(kindService, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
}

// TestSetupNotEnteredIsNotAnOutage: a tenant whose required configuration
// was never entered answers every read with HTTP 500
// PXSetupNotEnteredException (shared/erp-api/acumatica/api-facts.md
// §3.2). That lasts until an administrator enters the data, so it is not
// a retryable outage: the model is told what is missing and that retrying
// will not help, never that there are no records.
func TestSetupNotEnteredIsNotAnOutage(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{SetupNotEntered: "Company Branches"}})
	h.userToken(kindFull.role)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"acumatica_list_entities", map[string]any{"entity": "Customer", "top": 5}},
		{"acumatica_list_customers", map[string]any{"search": "a"}},
	} {
		_, err := h.run(kindFull, tc.tool, tc.args)
		te := toolerr.Classify(err)
		if te == nil || te.Retryable() {
			t.Fatalf("%s: %v, want a failure that is not retryable", tc.tool, err)
		}
		if te.Code != toolerr.PermissionDenied {
			t.Errorf("%s: code %s, want %s", tc.tool, te.Code, toolerr.PermissionDenied)
		}
		for _, w := range []string{"Company Branches", "administrator", "does not mean there are no records"} {
			if !strings.Contains(te.Message, w) {
				t.Errorf("%s: message lacks %q: %s", tc.tool, w, te.Message)
			}
		}
		if strings.Contains(te.Message, "get_Current") {
			t.Errorf("%s: a stack trace reached the message: %s", tc.tool, te.Message)
		}
	}
}
