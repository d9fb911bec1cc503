package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// Issue 15 item 7, end to end: Acumatica's "Invalid credentials" (HTTP 500,
// PX.Data.PXException) is a rejected credential when a connection is
// saved (422 credential_rejected, not 502 upstream_unreachable) and
// AUTH_EXPIRED, not retryable, on a call, both with Acumatica's message.
func TestAcumaticaInvalidCredentialsEndToEnd(t *testing.T) {
	gw := startGateway(t, "", nil)
	acu := acumaticatest.NewServer(acumaticatest.Options{InvalidCredentials500: true})
	defer acu.Close()
	svc := acumaticaService(acu.ServiceLogin())
	site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, svc, "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	const acumaticaSays = "Invalid credentials. Please try again."

	t.Run("saving a wrong password is a rejected credential", func(t *testing.T) {
		const wrong = "wrong-password-7c1e"
		err := gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
			map[string]any{"credentials": map[string]string{
				"client_id": svc.ClientID, "client_secret": svc.ClientSecret, "username": svc.Username, "password": wrong,
			}}, nil)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || ae.Code != "credential_rejected" {
			t.Fatalf("PUT with a wrong password: %v, want 422 credential_rejected", err)
		}
		if !strings.Contains(ae.Message, acumaticaSays) || !strings.Contains(ae.Message, "nothing was saved") || strings.Contains(ae.Message, wrong) {
			t.Errorf("message = %q", ae.Message)
		}
	})

	t.Run("Acumatica's message is redacted before the operator sees it", func(t *testing.T) {
		// An ERP that quotes a connection string with its password.
		const leaked = "Leaked-P4ss-93"
		acu.SetFault(acumaticatest.Fault{PathPrefix: "/identity/connect/token", Times: 1, Status: http.StatusInternalServerError,
			Body: `{"message":"An error has occurred.","exceptionMessage":"Error: Invalid credentials. Please try again. (https://api.service:` + leaked + `@erp.example/identity)","exceptionType":"PX.Data.PXException"}`})
		defer acu.ClearFaults()
		err := gw.admin.do(context.Background(), http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
			map[string]any{"credentials": map[string]string{
				"client_id": svc.ClientID, "client_secret": svc.ClientSecret, "username": svc.Username, "password": "another-wrong-1",
			}}, nil)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity || ae.Code != "credential_rejected" {
			t.Fatalf("PUT refused with a quoted credential: %v, want 422 credential_rejected", err)
		}
		if strings.Contains(ae.Message, leaked) || !strings.Contains(ae.Message, acumaticaSays) {
			t.Errorf("message = %q", ae.Message)
		}
	})

	t.Run("a call after the password changed is AUTH_EXPIRED", func(t *testing.T) {
		cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
		mustSucceed(t, callTool(t, cs, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"}), "acumatica_get_currency")
		acu.ChangePassword(svc.Username, "changed-P@ss2")
		tokens := acu.RequestCount("/identity/connect/token")
		r := callTool(t, cs, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
		e, _ := r.Structured["error"].(map[string]any)
		if !r.IsError || r.errorCode() != "AUTH_EXPIRED" || e["retryable"] != false {
			t.Fatalf("got isError=%v %s", r.IsError, r.Text)
		}
		if msg := errorMessage(r); !strings.Contains(msg, acumaticaSays) || !strings.Contains(msg, "operator") {
			t.Errorf("message = %q", msg)
		}
		if n := acu.RequestCount("/identity/connect/token") - tokens; n > 2 {
			t.Errorf("%d token requests for one call, want at most a refresh and a password grant", n)
		}
	})
}

// A service connection whose password Acumatica refuses is not tried
// again for a while (so that a bot calling in a loop does not lock the API
// user out with failed sign-ins): on every replica, not only the one that
// was refused. Two replicas behind a balancer without affinity serve a
// bot's calls in turn; after the password changed at the ERP, their calls
// together make one refresh and one password grant, as one replica does.
func TestARefusedServiceSignInIsNotRepeatedByAnotherReplica(t *testing.T) {
	gw := startBalanced(t, "", nil)
	acu := acumaticatest.NewServer(acumaticatest.Options{InvalidCredentials500: true})
	defer acu.Close()
	svc := acumaticaService(acu.ServiceLogin())
	site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, svc, "acu", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	args := map[string]any{"CurrencyID": "USD"}
	// One call on each replica, so that both hold the API user's token.
	for range 2 {
		mustSucceed(t, callTool(t, cs, "acumatica_get_currency", args), "acumatica_get_currency")
	}
	acu.ChangePassword(svc.Username, "changed-P@ss2")
	tokens := acu.RequestCount("/identity/connect/token")
	for i := range 6 {
		if r := callTool(t, cs, "acumatica_get_currency", args); !r.IsError || r.errorCode() != "AUTH_EXPIRED" {
			t.Fatalf("call %d after the password changed: isError=%v %s", i, r.IsError, r.Text)
		}
	}
	if n := acu.RequestCount("/identity/connect/token") - tokens; n > 2 {
		t.Errorf("6 calls on two replicas with a refused password made %d token requests, want at most 2 (one refresh, one password grant)", n)
	}
}
