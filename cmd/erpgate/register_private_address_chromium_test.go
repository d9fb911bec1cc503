package main

import (
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// startHTTPSGateway runs a replica as production runs it: over https, at
// https://gw.example.com:<port> (a browser started with
// httpsGatewayBrowser maps the name to loopback and takes the test
// certificate), so that the ERP address policy applies.
func startHTTPSGateway(t *testing.T) *gateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	certs := httptest.NewUnstartedServer(nil)
	certs.StartTLS()
	cert := certs.TLS.Certificates[0]
	certs.Close()
	admin, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.GenerateKeySpec("t1")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := "https://gw.example.com:" + port
	logs := &syncBuffer{}
	dbURL := pgtest.NewDatabase(t)
	app := serveReplica(t, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), base, dbURL, admin.Value.Reveal(), keys,
		map[string]string{"ERPGATE_LISTEN_ADDR": ln.Addr().String()}, logs)
	return &gateway{URL: base, AdminToken: admin.Value.Reveal(), Keys: keys, DBURL: dbURL, App: app, Logs: logs}
}

// httpsGatewayBrowser are the options of a browser for startHTTPSGateway.
var httpsGatewayBrowser = []chromedp.ExecAllocatorOption{
	chromedp.Flag("host-resolver-rules", "MAP gw.example.com 127.0.0.1"),
	chromedp.Flag("ignore-certificate-errors", true),
}

// TestChromiumRegistrationPrivateAddressInPlainWords: a person registering
// an ERP at a private address, or one whose name does not resolve, is told
// that erpgate reaches only public addresses and that the operator of this
// erpgate can allow a private one, without the operator's setting
// (ERPGATE_ERP_PRIVATE_HOSTS), which a registrant cannot set. The admin API
// still names it (TestSiteAtANonPublicAddressIsRefused,
// TestProductionRefusesNonPublicERPAddresses).
func TestChromiumRegistrationPrivateAddressInPlainWords(t *testing.T) {
	needChromium(t)
	r := &registration{t: t, gw: startHTTPSGateway(t), ctx: newChromiumWithin(t, 2*time.Minute, httpsGatewayBrowser...)}
	r.docs = recordDocumentResponses(t, r.ctx)
	for _, c := range []struct{ name, baseURL, says string }{
		{"private", "https://10.0.0.8", "10.0.0.8"},
		{"unresolved", "https://nothing-here.invalid", "nothing-here.invalid"},
	} {
		r.start("frappe", "Acme Ltd", c.baseURL, nil)
		waitForTitle(t, r.ctx, "Register your ERP")
		r.shot(c.name)
		problem := browserResult(t, r.ctx, "read the refusal", chromedp.Text(chromedp.CSS("#start-error")))
		for _, want := range []string{c.says, "public addresses", "operator of this erpgate"} {
			if !strings.Contains(problem, want) {
				t.Errorf("%s: the refusal %q does not say %q", c.name, problem, want)
			}
		}
		if text := r.text(); strings.Contains(text, "ERPGATE_") {
			t.Errorf("%s: the page names an operator's setting:\n%s", c.name, text)
		}
	}
}
