package main

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
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

// keepSpendingLinks sends made-up links from source until the function
// it returns is called, so that the source's bound stays spent while a
// test's person walks through several pages.
func keepSpendingLinks(base, source string) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for {
			select {
			case <-quit:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodGet, base+"/approve/"+uuid.NewString(), nil)
			req.Header.Set("X-Forwarded-For", source)
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// TestMadeUpLinksDoNotLockOutAnApproverAtTheSameSource: approval links
// were bare ids, looked up within the source's bound on links that lead
// nowhere. Someone at a shared address (an office's NAT) who spent it with
// made-up links kept the person a write waited for from opening the link
// their AI assistant gave them: 429. The link now carries a check value
// erpgate made, and passes a spent source; a made-up one, with a check
// value or without, is bounded as before.
func TestMadeUpLinksDoNotLockOutAnApproverAtTheSameSource(t *testing.T) {
	gw, _, link := salesOrderAwaitingAlice(t)
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
		if status, _ := refusedOnceSpent(func() { spendLinks(t, gw.URL, shared) }, func() (int, string) {
			return getFrom(t, gw.URL+"/approve/"+madeUp, shared)
		}); status != http.StatusTooManyRequests {
			t.Errorf("%s from the spent source: HTTP %d, want 429", name, status)
		}
	}
	// A link without a check value (sent before there were any) works as
	// before from a source that is not spent.
	if status, body := getFrom(t, gw.URL+"/approve/"+id, "203.0.113.91"); status != http.StatusOK || !strings.Contains(body, "Approve a change") {
		t.Errorf("the link without its check value from another source: HTTP %d %s", status, pageText(body))
	}
}

// TestMadeUpLinksDoNotLockOutARegistrationAtTheSameSource: a
// registration's address was a bare id, looked up within the source's
// bound on links that lead nowhere. An ERP administrator registering at a
// shared address where someone else spent it with made-up links was
// answered 429 on their own registration, from its first page. Its
// address now carries a check value erpgate made, and passes a spent
// source, and so do its forms; a made-up one is bounded as before.
func TestMadeUpLinksDoNotLockOutARegistrationAtTheSameSource(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	shared := "198.51.100.92"
	from := map[string]string{"X-Forwarded-For": shared}
	b := newRegistrationClient(t, gw.URL)
	path := b.startRegistration(sim.URL)
	spendLinks(t, gw.URL, shared)
	status, _, page := b.do(http.MethodGet, path, nil, from)
	m := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the administrator opens their registration from the spent source: HTTP %d %s", status, pageText(page))
	}
	// The page's form names the registration as its address did.
	action := regexp.MustCompile(`action="([^"]+/client)"`).FindStringSubmatch(page)
	if action == nil || action[1] != gw.URL+path+"/client" {
		t.Fatalf("the OAuth client form posts to %q, want %s", action, gw.URL+path+"/client")
	}
	spendLinks(t, gw.URL, shared)
	status, h, page := b.do(http.MethodPost, path+"/client", url.Values{"csrf": {m[1]}, "client_id": {"someclient"}, "client_secret": {"somesecret"}}, from)
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), sim.URL+"/") {
		t.Errorf("the administrator's OAuth client from the spent source: HTTP %d to %q %s, want the ERP's sign-in", status, h.Get("Location"), pageText(page))
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(path, "/register/"), ".")
	if id == strings.TrimPrefix(path, "/register/") {
		t.Fatalf("the registration's address %s carries no check value", path)
	}
	// A check value that does not verify (made up, or made under a key
	// dropped since) is looked up within the bound, as no check value is.
	for name, madeUp := range map[string]string{
		"a made-up id with a check value":  uuid.NewString() + strings.TrimPrefix(path, "/register/"+id),
		"the real id with a made-up value": id + ".AAAAAAAAAAAAAA",
	} {
		if status, page := refusedOnceSpent(func() { spendLinks(t, gw.URL, shared) }, func() (int, string) {
			status, _, page := b.do(http.MethodGet, "/register/"+madeUp, nil, from)
			return status, page
		}); status != http.StatusTooManyRequests {
			t.Errorf("%s from the spent source: HTTP %d, want 429 %s", name, status, pageText(page))
		}
	}
	// Without a check value, the address is looked up within the bound.
	if status, _ := refusedOnceSpent(func() { spendLinks(t, gw.URL, shared) }, func() (int, string) {
		status, _, page := b.do(http.MethodGet, "/register/"+id, nil, from)
		return status, page
	}); status != http.StatusTooManyRequests {
		t.Errorf("the real id without its check value from the spent source: HTTP %d, want 429", status)
	}
}

// TestMadeUpLinksDoNotLockOutAnApprovalSignInAtTheSameSource: to
// approve, the person signs in at the ERP, which sends their browser back
// to erpgate with the sign-in's state; that state was looked up within
// the source's bound on links that lead nowhere. While someone at the
// same address sent made-up links, the approver came back from the ERP to
// 429 and could not approve. A state erpgate made carries a check value
// and passes; the whole approval, from the spent source, goes through.
func TestMadeUpLinksDoNotLockOutAnApprovalSignInAtTheSameSource(t *testing.T) {
	gw, e, link := salesOrderAwaitingAlice(t)
	shared := "198.51.100.93"
	spendLinks(t, gw.URL, shared)
	// Someone at the address goes on sending made-up links while the
	// approver signs in and decides, so that the bound stays spent.
	defer keepSpendingLinks(gw.URL, shared)()
	b := signin.NewBrowser(e2eRedirectURI, e.Alice.Login)
	b.HC.Transport = forwardedFor(shared)
	e.approveIn(t, b, link, e.Alice)
}

// TestMadeUpLinksDoNotLockOutASignInAtTheSameSource: a person connecting
// their AI client signs in at their ERP, which sends the browser back to
// erpgate with the sign-in flow's id, and then sees the consent page;
// both looked the flow up within the source's bound on links that lead
// nowhere. While someone at the same address sent made-up links, the
// person came back from the ERP to 429 and could not connect. A flow id
// erpgate made carries a check value and passes.
func TestMadeUpLinksDoNotLockOutASignInAtTheSameSource(t *testing.T) {
	sim, gw, site := startFrappeOAuthGateway(t, loopbackProxyEnv)
	shared := "198.51.100.94"
	spendLinks(t, gw.URL, shared)
	defer keepSpendingLinks(gw.URL, shared)()
	b := newHeadlessBrowser(t, e2eRedirectURI, frappeLogin(userWithRole(t, sim, "all-companies")))
	b.HC.Transport = forwardedFor(shared)
	c, err := tryConnectOAuthWith(t, site.MCPURL, b, nil, nil)
	if err != nil {
		t.Fatalf("a person connecting from the spent source: %v (last page HTTP %d: %s)", err, b.LastPage().Status, pageText(b.LastPage().Body))
	}
	if r := callTool(t, c.cs, "get_current_user", map[string]any{}); r.IsError {
		t.Errorf("the person's first call: %s", r.Text)
	}
}

// salesOrderAwaitingAlice starts a gateway with a Frappe site whose write
// tools are on, and has Alice's AI client propose a sales order: the
// gateway, the writes' harness and the approval link the client got.
func salesOrderAwaitingAlice(t *testing.T) (*gateway, *writeERP, string) {
	t.Helper()
	sim, gw, site := startFrappeOAuthGateway(t, writesGatewayEnv)
	alice := userWithRole(t, sim, "all-companies")
	e := &writeERP{Kind: "frappe", GW: gw, Site: site, CreateTool: "create_sales_order",
		Alice: writePerson{ERPUser: alice.Email, Login: frappeLogin(alice)}}
	e.enableWrites(t, "")
	c := e.connectWriter(t, e.Alice, pathPlain)
	link := e.approvalRequired(t, callTool(t, c.cs, e.CreateTool, map[string]any{
		"customer": sim.Data().List("Customer")[0].Name, "company": "Demo Holdings NZ Ltd", "delivery_date": "2026-12-31",
		"items": []any{map[string]any{"item_code": sim.Data().List("Item")[0].Name, "qty": 1}},
	}))
	return gw, e, link
}
