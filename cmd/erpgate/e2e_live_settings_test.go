package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// TestLiveSettingsReachEveryReplica changes settings through one
// replica's admin API and watches a second replica on the same Postgres,
// through the official MCP client, apply each without a restart (the
// time each took is logged): a site's redaction pattern, its tool list, the deployment's row
// cap and the per-user call limit.
func TestLiveSettingsReachEveryReplica(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	a := startGateway(t, "", nil)
	b := startGateway(t, a.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": a.Keys})
	site := a.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	onB := strings.Replace(site.ServiceMCPURL, a.URL, b.URL, 1)
	cs := connect(t, onB, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
	ctx := context.Background()

	put := func(path string, value any) {
		t.Helper()
		if err := a.admin.do(ctx, http.MethodPut, path, map[string]any{"value": value}, nil); err != nil {
			t.Fatalf("PUT %s: %v", path, err)
		}
	}
	// within polls check on replica b until it holds, and logs how long
	// that took after the change was made on replica a. The bound says
	// only that the change arrives, by NOTIFY or by the 500 ms poll; it is
	// not a speed assertion (a loaded CI machine must not fail it).
	within := func(what string, check func() bool) {
		t.Helper()
		start := time.Now()
		deadline := start.Add(15 * time.Second)
		for !check() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: replica b did not apply the change within 15 s", what)
			}
			// Some checks are tool calls, and the caller may make 40 a
			// minute: looking every 50 ms leaves the change more than a
			// second and a half to arrive on a loaded machine.
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("%s: in force on replica b %v after the change on replica a", what, time.Since(start).Round(time.Millisecond))
	}

	customerName := func() any {
		out := mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 3}), "list_customers")
		names := findMember(out, "customer_name")
		if len(names) == 0 {
			t.Fatalf("list_customers returned no customer_name: %v", out)
		}
		return names[0]
	}
	if v := customerName(); v == redact.Placeholder {
		t.Fatalf("customer_name is redacted before any setting: %v", v)
	}
	put("/sites/acme/settings/redaction_add", []string{"CustomerName"})
	within("the site's redaction pattern", func() bool { return customerName() == redact.Placeholder })

	toolNames := func() []string {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if n := len(toolNames()); n < 5 {
		t.Fatalf("only %d tools before", n)
	}
	put("/sites/acme/settings/tools", []string{"list_customers", "get_document"})
	within("the site's tool list", func() bool {
		names := toolNames()
		slices.Sort(names)
		return slices.Equal(names, []string{"get_document", "list_customers"})
	})
	if r := callTool(t, cs, "list_suppliers", map[string]any{}); !r.IsError || r.errorCode() != "PERMISSION_DENIED" || !strings.Contains(errorMessage(r), "does not offer the tool list_suppliers") {
		t.Errorf("a tool the site does not offer: %s", r.Text)
	}

	limitOf := func() json.Number {
		out := mustSucceed(t, callTool(t, cs, "list_customers", map[string]any{"limit": 50}), "list_customers")
		limits := findMember(out, "limit")
		if len(limits) != 1 {
			t.Fatalf("list_customers: %d limits in %v", len(limits), out)
		}
		n, _ := limits[0].(json.Number)
		return n
	}
	if got := limitOf(); got != "50" {
		t.Fatalf("limit before: %v", got)
	}
	put("/settings/max_records", 2)
	within("the deployment's row cap", func() bool { return limitOf() == "2" })

	put("/settings/user_per_minute", 1)
	refused := false
	start := time.Now()
	// At most 20 calls (below the old limit of 40 a minute, so a refusal is
	// the new limit's), 50 ms apart: back to back, they could all be made
	// before the change reached replica b (CI saw it take 60 ms).
	for i := 0; i < 20 && !refused; i++ {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		r := callTool(t, cs, "list_customers", map[string]any{"limit": 1})
		refused = r.IsError && r.errorCode() == "RATE_LIMITED"
	}
	if !refused {
		t.Fatal("20 calls after the per-user limit went down to 1 a minute were all served")
	}
	t.Logf("the per-user limit of 1 a minute refused a call on replica b %v after the change", time.Since(start).Round(time.Millisecond))
}

// TestSettingsPagesShowTheChangeJustMade runs two replicas behind a
// balancer without affinity, so that a change and the page or answer that
// follows it land on different replicas. What the operator reads right
// after a change (the admin API's list, the console's settings page the
// form redirects to) and the old value each change's audit event records
// must be the change just made, not what the other replica held before
// its notification arrived.
func TestSettingsPagesShowTheChangeJustMade(t *testing.T) {
	gw := startBalanced(t, "", nil)
	ctx := context.Background()
	maxRecords := func() float64 {
		t.Helper()
		var list struct {
			Settings []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"settings"`
		}
		if err := gw.admin.do(ctx, http.MethodGet, "/settings", nil, &list); err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Settings {
			if s.Name == "max_records" {
				v, _ := s.Value.(float64)
				return v
			}
		}
		t.Fatal("GET /settings lists no max_records")
		return 0
	}

	t.Run("the admin API", func(t *testing.T) {
		for i := range 10 {
			want := 200 + i
			if err := gw.admin.do(ctx, http.MethodPut, "/settings/max_records", map[string]any{"value": want}, nil); err != nil {
				t.Fatal(err)
			}
			if got := maxRecords(); got != float64(want) {
				t.Errorf("change %d: GET /settings right after PUT %d says max_records is %v", i, want, got)
			}
		}
	})

	t.Run("changes one after another", func(t *testing.T) {
		// Consecutive changes alternate between the replicas; their audit
		// events are checked below.
		for i := range 10 {
			if err := gw.admin.do(ctx, http.MethodPut, "/settings/max_records", map[string]any{"value": 400 + i}, nil); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("the console", func(t *testing.T) {
		b := newConsoleBrowser(t, gw.URL)
		if status, _, _ := b.signIn(gw.AdminToken); status != http.StatusSeeOther {
			t.Fatalf("console sign-in: HTTP %d", status)
		}
		csrf := b.csrfOf("/console/settings")
		for i := range 10 {
			want := strconv.Itoa(300 + i)
			status, _, h := b.do(http.MethodPost, "/console/settings", url.Values{"csrf": {csrf}, "site": {""},
				"name": {"max_records"}, "type": {"int"}, "value": {want}})
			if status != http.StatusSeeOther {
				t.Fatalf("change %d: HTTP %d", i, status)
			}
			loc, err := url.Parse(h.Get("Location"))
			if err != nil {
				t.Fatal(err)
			}
			status, page, _ := b.do(http.MethodGet, loc.RequestURI(), nil)
			if status != http.StatusOK {
				t.Fatalf("change %d: the page after it: HTTP %d", i, status)
			}
			row := page[strings.Index(page, `id="setting-max_records"`):]
			if shown := row[:strings.Index(row, "</tr>")]; !strings.Contains(shown, `<code class="value">`+want+`</code>`) {
				t.Errorf("change %d to %s: the settings page it leads to shows %s", i, want, pageText(shown))
			}
		}
	})

	// Each change's audit event names as the old value the one the change
	// before it made.
	rows, err := gw.App.pool.Query(ctx, `SELECT details->>'old', details->>'new' FROM admin_events
		WHERE action = 'change_setting' AND details->>'setting' = 'max_records' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev := "1000"
	for rows.Next() {
		var old, new string
		if err := rows.Scan(&old, &new); err != nil {
			t.Fatal(err)
		}
		if old != prev {
			t.Errorf("the change to %s records the old value %s; the one before it made %s", new, old, prev)
		}
		prev = new
	}
}
