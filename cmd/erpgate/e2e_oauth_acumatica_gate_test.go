package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// TestOAuthAcumaticaAccessGateOnRefresh: the canary gate is read again
// when the user's ERP token is refreshed (at most once per
// ERPGATE_OAUTH_ACCESS_GATE_INTERVAL), so a user whose access the ERP
// administrator withdraws loses their erpgate grants at the next refresh
// instead of keeping them until the grant ends. A gate that is broken at
// refresh time (404, 500) does not lock anyone out.
func TestOAuthAcumaticaAccessGateOnRefresh(t *testing.T) {
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	mcpURL := acumaticaOAuthSite(t, gw, "acu", sim)
	admin := sim.User(acumaticatest.RoleFull)
	canaryPath := "/t/" + sim.Tenant() + "/api/odata/gi/" + acumaticatest.CanaryInquiry

	c := connectOAuth(t, mcpURL, acumaticaLogin(admin))
	listCustomers := customerListTool(t, c)
	mustSucceed(t, callTool(t, c.cs, listCustomers, nil), listCustomers)

	// expire makes the user's ERP token due for a refresh; stale also
	// moves the last gate check back beyond the interval (5 minutes).
	expire := func(stale bool) {
		sim.ExpireTokens()
		expireUpstreamTokens(t, gw.DBURL)
		if stale {
			execSQL(t, gw.DBURL, `UPDATE upstream_tokens SET gate_checked_at = now() - interval '1 hour'`)
		}
	}
	gateCheckedRecently := func() int {
		return queryInt(t, gw.DBURL, `SELECT count(*) FROM upstream_tokens WHERE gate_checked_at > now() - interval '1 minute'`)
	}
	revocations := func() int {
		return queryInt(t, gw.DBURL, `SELECT count(*) FROM auth_events WHERE event = 'grants_revoked' AND reason = 'access_denied'`)
	}

	t.Run("sign-in records the gate check", func(t *testing.T) {
		if gateCheckedRecently() != 1 {
			t.Error("the ERP token stored at sign-in has no recent gate check")
		}
	})

	t.Run("access still granted: the refresh reads the gate and goes on", func(t *testing.T) {
		expire(true)
		canary, refreshes := sim.RequestCount(canaryPath), sim.RefreshCount()
		mustSucceed(t, callTool(t, c.cs, listCustomers, nil), "list_customers after refresh")
		if got := sim.RefreshCount() - refreshes; got != 1 {
			t.Errorf("%d ERP refreshes, want 1", got)
		}
		if got := sim.RequestCount(canaryPath) - canary; got != 1 {
			t.Errorf("the canary was read %d times on refresh, want 1", got)
		}
		if gateCheckedRecently() != 1 {
			t.Error("the refresh did not record its gate check")
		}
	})

	t.Run("checked within the interval: the refresh does not read the gate", func(t *testing.T) {
		expire(false)
		canary, refreshes := sim.RequestCount(canaryPath), sim.RefreshCount()
		mustSucceed(t, callTool(t, c.cs, listCustomers, nil), "list_customers after refresh")
		if got := sim.RefreshCount() - refreshes; got != 1 {
			t.Errorf("%d ERP refreshes, want 1", got)
		}
		if got := sim.RequestCount(canaryPath) - canary; got != 0 {
			t.Errorf("the canary was read %d times within the interval, want 0", got)
		}
	})

	for _, status := range []int{http.StatusNotFound, http.StatusInternalServerError} {
		t.Run("a gate answering "+http.StatusText(status)+" on refresh locks nobody out", func(t *testing.T) {
			sim.SetFault(acumaticatest.Fault{PathPrefix: canaryPath, Status: status, Body: `{"message":"fault"}`})
			defer sim.ClearFaults()
			expire(true)
			canary := sim.RequestCount(canaryPath)
			mustSucceed(t, callTool(t, c.cs, listCustomers, nil), "list_customers with a broken gate")
			if sim.RequestCount(canaryPath) == canary {
				t.Error("the gate was not read")
			}
			if gateCheckedRecently() != 0 {
				t.Error("a failed gate check was recorded as a check, so the next refresh would not try again")
			}
			if !strings.Contains(gw.Logs.String(), "access gate could not be checked") {
				t.Error("no warning in the log")
			}
		})
	}

	t.Run("access withdrawn: the refresh ends the user's grants", func(t *testing.T) {
		before := revocations()
		sim.SetInquiryAccess(admin.Username, acumaticatest.CanaryInquiry, false)
		defer sim.ResetInquiryAccess()
		expire(true)
		res := callTool(t, c.cs, listCustomers, nil)
		if !res.IsError || res.errorCode() != "PERMISSION_DENIED" || !strings.Contains(res.Text, "administrator") {
			t.Fatalf("call after the canary was withdrawn: %.300s", res.Text)
		}
		if got := revocations() - before; got != 1 {
			t.Errorf("%d grants_revoked/access_denied events, want 1", got)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM upstream_tokens`); n != 0 {
			t.Errorf("%d ERP tokens kept", n)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM oauth_tokens`); n != 0 {
			t.Errorf("%d erpgate tokens kept", n)
		}
		if resp := rawMCP(t, mcpURL, c.source.current().AccessToken); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the client's next request: HTTP %d, want 401", resp.StatusCode)
		}
	})
}
