package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// design.md: "Max records per query: default 1000, capped per site." A
// site's own max_records (a live setting of the site) caps the rows of its
// upstream queries below the deployment's, whatever its connector; another
// site keeps the deployment's cap. The setting is changed on replica a and
// the calls go to replica b, which must apply it from its settings
// snapshot. The expected rows are asked of the simulator itself.

// customersOnERP lists the names of the enabled customers the simulator
// gives user, in list_customers' default order (customer_name, then name).
func customersOnERP(t *testing.T, baseURL string, user frappetest.User, n int) []string {
	t.Helper()
	q := url.Values{
		"fields":            {`["name"]`},
		"filters":           {`[["disabled","=",0]]`},
		"order_by":          {"customer_name asc, name asc"},
		"limit_page_length": {strings.Repeat("9", 1)},
	}
	q.Set("limit_page_length", jsonInt(n))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, baseURL+"/api/resource/Customer?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+user.APIKey+":"+user.APISecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("ask the simulator for its customers: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the simulator's customers: HTTP %d, %v", resp.StatusCode, err)
	}
	names := make([]string, 0, len(out.Data))
	for _, d := range out.Data {
		names = append(names, d.Name)
	}
	return names
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// customerPage is list_customers' answer: the names of its rows and its
// page.
type customerPage struct {
	Names      []string
	Complete   bool
	NextOffset *int
	Limit      int
}

// listCustomers calls list_customers with limit through /service/mcp.
func listCustomers(t *testing.T, client *http.Client, baseURL, token string, limit int) customerPage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "list_customers", "arguments": map[string]any{"limit": limit}}})
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, baseURL+"/service/mcp", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Erpgate-Service-Token", token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("list_customers: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	msg := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				msg = []byte(strings.TrimSpace(data))
			}
		}
	}
	var rpc struct {
		Result *struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Data []struct {
					Name string `json:"name"`
				} `json:"data"`
				Meta struct {
					Limit      int  `json:"limit"`
					Complete   bool `json:"complete"`
					NextOffset *int `json:"next_offset"`
				} `json:"meta"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &rpc); err != nil || rpc.Result == nil || rpc.Result.IsError {
		t.Fatalf("list_customers: HTTP %d %.400s", resp.StatusCode, raw)
	}
	sc := rpc.Result.StructuredContent
	p := customerPage{Complete: sc.Meta.Complete, NextOffset: sc.Meta.NextOffset, Limit: sc.Meta.Limit}
	for _, d := range sc.Data {
		p.Names = append(p.Names, d.Name)
	}
	return p
}

// TestSiteMaxRecordsOfItsOwn: small, a Frappe site, is given max_records
// 5 of its own on replica a; on replica b its list_customers of 20 returns
// the first 5 of the ERP's customers and says more follow, while big keeps
// the deployment's cap and returns 20. A deployment's cap below the site's
// applies to it too (a site's own only lowers), and removing the site's
// returns it to the deployment's.
func TestSiteMaxRecordsOfItsOwn(t *testing.T) {
	r := newCeilingRig(t)
	smallUser := r.smallGauge.next.(*frappetest.Simulator).User("service")
	bigUser := r.bigGauge.next.(*frappetest.Simulator).User("service")
	wantSmall := customersOnERP(t, r.smallERP, smallUser, 20)
	wantBig := customersOnERP(t, r.bigERP, bigUser, 20)
	if len(wantSmall) != 20 || len(wantBig) != 20 {
		t.Fatalf("the simulators seed %d and %d enabled customers, the test needs 20", len(wantSmall), len(wantBig))
	}

	r.setOnA(t, "max_records", 5)

	small := listCustomers(t, r.client, r.b.URL, r.smallToken, 20)
	if !slices.Equal(small.Names, wantSmall[:5]) || small.Complete || small.NextOffset == nil || *small.NextOffset != 5 || small.Limit != 5 {
		t.Errorf("small's list_customers of 20 with its own max_records 5: %v (limit %d, complete %v, next %v), want the ERP's first five %v and more to follow",
			small.Names, small.Limit, small.Complete, small.NextOffset, wantSmall[:5])
	}
	big := listCustomers(t, r.client, r.b.URL, r.bigToken, 20)
	if !slices.Equal(big.Names, wantBig) {
		t.Errorf("big's list_customers of 20 with the deployment's cap: %v, want the ERP's first twenty %v", big.Names, wantBig)
	}

	// The deployment's cap, lowered below small's own, applies to it too.
	if err := r.a.admin.do(t.Context(), http.MethodPut, "/settings/max_records", map[string]any{"value": 3}, nil); err != nil {
		t.Fatalf("PUT /settings/max_records 3: %v", err)
	}
	waitFor(t, 15_000_000_000, "replica b holds the deployment's max_records 3", func() bool {
		return r.b.App.live.Current().Deployment.MaxRecords == 3
	})
	if err := r.b.App.live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := listCustomers(t, r.client, r.b.URL, r.smallToken, 20); !slices.Equal(got.Names, wantSmall[:3]) {
		t.Errorf("small's list_customers under the deployment's cap 3: %v, want %v", got.Names, wantSmall[:3])
	}
	if got := listCustomers(t, r.client, r.b.URL, r.bigToken, 20); !slices.Equal(got.Names, wantBig[:3]) {
		t.Errorf("big's list_customers under the deployment's cap 3: %v, want %v", got.Names, wantBig[:3])
	}
	if err := r.a.admin.do(t.Context(), http.MethodDelete, "/settings/max_records", nil, nil); err != nil {
		t.Fatalf("DELETE /settings/max_records: %v", err)
	}

	// Removed, small has the deployment's cap again.
	if err := r.a.admin.do(t.Context(), http.MethodDelete, "/sites/small/settings/max_records", nil, nil); err != nil {
		t.Fatalf("DELETE /sites/small/settings/max_records: %v", err)
	}
	waitFor(t, 15_000_000_000, "replica b holds small's max_records back at the deployment's", func() bool {
		_, src, _ := r.b.App.live.Current().Effective(r.smallID, "max_records")
		return src != "site" && r.b.App.live.Current().Deployment.MaxRecords == 1000
	})
	if err := r.b.App.live.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := listCustomers(t, r.client, r.b.URL, r.smallToken, 20); !slices.Equal(got.Names, wantSmall) {
		t.Errorf("small's list_customers after its own cap is removed: %v, want %v", got.Names, wantSmall)
	}
}
