package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestRequestIDFindsTheCall: every MCP reply carries X-Request-Id, which is
// what a person quotes when a call went wrong; the operator finds that
// call's usage event by it (request_id, the admin API's and the viewer's
// filter), and only that one, among other calls of the same tool.
func TestRequestIDFindsTheCall(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))

	call := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, site.ServiceMCPURL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_companies","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("X-Erpgate-Service-Token", site.ServiceToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("tools/call = %d, X-Request-Id %q", resp.StatusCode, id)
		}
		return id
	}
	ids := []string{call(), call(), call()}
	want := ids[1]

	type page struct {
		Events []map[string]any `json:"events"`
	}
	get := func(query string) []map[string]any {
		t.Helper()
		var p page
		if err := gw.admin.do(t.Context(), http.MethodGet, "/usage-events?"+query, nil, &p); err != nil {
			t.Fatal(err)
		}
		return p.Events
	}
	// Wait until the three calls are stored: the filter must choose among
	// them.
	for deadline := time.Now().Add(10 * time.Second); len(get("tool=list_companies")) < len(ids); {
		if time.Now().After(deadline) {
			t.Fatalf("the %d calls' usage events were not stored", len(ids))
		}
		time.Sleep(50 * time.Millisecond)
	}
	events := get("request_id=" + url.QueryEscape(want))
	if len(events) != 1 || events[0]["request_id"] != want || events[0]["tool"] != "list_companies" || events[0]["site_slug"] != "acme" {
		t.Fatalf("request_id=%s: events %v, want the one list_companies call", want, events)
	}
}
