package main

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// initializeThenTo sends a client's first request (its initialize) as it
// is and every later one to the host of other: a load balancer moving the
// client to another replica once it holds its session id.
type initializeThenTo struct {
	base  http.RoundTripper
	other *url.URL
	sent  atomic.Int64
}

func (s *initializeThenTo) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.sent.Add(1) > 1 {
		r = r.Clone(r.Context())
		r.URL.Host, r.Host = s.other.Host, s.other.Host
	}
	return s.base.RoundTrip(r)
}

// TestAnEarlierProtocolSessionOpensOnAReplicaListingTheKeysInAnotherOrder:
// during a key rotation's step 3 (docs/operations.md) replicas list the
// keys k1,k2 and k2,k1 at once. A 2025-11-25 client that declared URL
// elicitation at initialize on the first and is then served by the
// second is asked for an approval by -32042 there too: the second reads
// the capability session id the first sealed, instead of asking it by
// tool error as a client that declared nothing.
func TestAnEarlierProtocolSessionOpensOnAReplicaListingTheKeysInAnotherOrder(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	k1, k2 := twoKeys(t)
	a := startGateway(t, "", map[string]string{"ERPGATE_ENCRYPTION_KEYS": k1 + "," + k2})
	site := a.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.admin.enableWrites(context.Background(), site.ID, writeToolNames(reg, "frappe"), userWithRole(t, sim, "all-companies").Email); err != nil {
		t.Fatal(err)
	}
	b := startGateway(t, a.DBURL, map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": k2 + "," + k1})
	bURL, _ := url.Parse(b.URL)

	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-e2e", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	})
	hc := &http.Client{Transport: &initializeThenTo{other: bURL,
		base: headerTransport{base: http.DefaultTransport, headers: map[string]string{"X-Erpgate-Service-Token": site.ServiceToken}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: site.ServiceMCPURL, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	e := &writeERP{Kind: "frappe", GW: b, Site: site, CreateTool: "create_sales_order"}
	args := map[string]any{"customer": sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"items": []any{map[string]any{"item_code": sim.Data().List("Item")[0].Name, "qty": 1}}}
	res, err := callRaw(cs, &mcp.CallToolParams{Name: e.CreateTool, Arguments: args})
	if err == nil {
		t.Fatalf("want -32042 from the replica listing k2 first, got %s", decodeToolResult(t, e.CreateTool, res).Text)
	}
	e.urlElicitationRequired(t, err)
}
