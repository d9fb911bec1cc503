package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// getFrom GETs link with X-Forwarded-For source (the gateway trusts
// loopback as its proxy), without following redirects.
func getFrom(t *testing.T, link, source string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", source)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// spendLinks sends made-up links from source until one is refused: the
// bound refills one every 100 ms, so what a test checks next comes right
// after the source was refused.
func spendLinks(t *testing.T, base, source string) {
	t.Helper()
	for range 400 {
		if status, _ := getFrom(t, base+"/approve/"+uuid.NewString(), source); status == http.StatusTooManyRequests {
			return
		}
	}
	t.Fatal("400 made-up links from one source, none refused")
}

// TestMadeUpLinksDoNotLockOutAnApproverAtTheSameSource: approval links
// were bare ids, looked up within the source's bound on links that lead
// nowhere. Someone at a shared address (an office's NAT) who spent it with
// made-up links kept the person a write waited for from opening the link
// their AI assistant gave them: 429. The link now carries a check value
// erpgate made, and passes a spent source; a made-up one, with a check
// value or without, is bounded as before.
func TestMadeUpLinksDoNotLockOutAnApproverAtTheSameSource(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", writesGatewayEnv)
	site := frappeOAuthSite(t, gw, "acme", sim)
	alice := userWithRole(t, sim, "all-companies")
	e := &writeERP{Kind: "frappe", GW: gw, Site: site, CreateTool: "create_sales_order",
		Alice: writePerson{ERPUser: alice.Email, Login: frappeLogin(alice)}}
	e.enableWrites(t, "")
	c := e.connectWriter(t, e.Alice, pathPlain)
	link := e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, map[string]any{
		"customer": sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"items": []any{map[string]any{"item_code": sim.Data().List("Item")[0].Name, "qty": 1}},
	}))
	shared := "198.51.100.91"
	spendLinks(t, gw.URL, shared)
	if status, body := getFrom(t, link, shared); status != http.StatusOK || !strings.Contains(body, "Approve a change") {
		t.Fatalf("the approver opens their link from the spent source: HTTP %d %s", status, pageText(body))
	}
	id := actionID(t, link)
	for name, madeUp := range map[string]string{
		"a made-up id with a check value":     uuid.NewString() + link[strings.Index(link, id)+len(id):],
		"the real id with a made-up value":    id + ".AAAAAAAAAAAAAA",
		"the real id without its check value": id,
	} {
		spendLinks(t, gw.URL, shared)
		if status, _ := getFrom(t, gw.URL+"/approve/"+madeUp, shared); status != http.StatusTooManyRequests {
			t.Errorf("%s from the spent source: HTTP %d, want 429", name, status)
		}
	}
	// A link without a check value (sent before there were any) works as
	// before from a source that is not spent.
	if status, body := getFrom(t, gw.URL+"/approve/"+id, "203.0.113.91"); status != http.StatusOK || !strings.Contains(body, "Approve a change") {
		t.Errorf("the link without its check value from another source: HTTP %d %s", status, pageText(body))
	}
}
