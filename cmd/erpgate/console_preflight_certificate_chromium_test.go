package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// tlsServerWith starts an HTTPS server on 127.0.0.1 whose certificate
// names dnsNames and ips and is valid from notBefore to notAfter.
func tlsServerWith(t *testing.T, dnsNames []string, ips []net.IP, notBefore, notAfter time.Time) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "erp test"},
		NotBefore: notBefore, NotAfter: notAfter, DNSNames: dnsNames, IPAddresses: ips,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestChromiumPreflightCertificateInPlainWords: the tls check of a certificate
// for another name, or out of its dates, says so in erpgate's words, which
// the console's preflight page shows. Before, it quoted crypto/x509
// ("x509: cannot validate certificate for 127.0.0.1 because it doesn't
// contain any IP SANs", "x509: certificate has expired or is not yet
// valid: current time … is after …").
func TestChromiumPreflightCertificateInPlainWords(t *testing.T) {
	gw := startGateway(t, "", nil)
	now := time.Now()
	otherName := tlsServerWith(t, []string{"erp.example.com"}, nil, now.Add(-time.Hour), now.Add(24*time.Hour))
	expiry := now.Add(-48 * time.Hour).UTC()
	expired := tlsServerWith(t, nil, []net.IP{net.ParseIP("127.0.0.1")}, now.Add(-96*time.Hour), expiry)

	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	for _, c := range []struct {
		name, baseURL string
		found         []string
	}{
		{"a certificate for another name", otherName.URL, []string{"is for erp.example.com, not for 127.0.0.1"}},
		{"an expired certificate", expired.URL, []string{"expired on " + expiry.Format("2006-01-02")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var site siteResponse
			slug := strings.ReplaceAll(c.name, " ", "-")
			if err := gw.admin.do(context.Background(), http.MethodPost, "/sites",
				map[string]any{"slug": slug, "kind": "frappe", "display_name": c.name, "base_url": c.baseURL}, &site); err != nil {
				t.Fatal(err)
			}
			p := runPreflight(t, gw, site.ID)
			found, fix := p.check(t, "tls")
			if p.status()["tls"] != "fail" {
				t.Fatalf("tls %s: found %q", p.status()["tls"], found)
			}
			for _, w := range c.found {
				if !strings.Contains(found, w) {
					t.Errorf("found %q lacks %q", found, w)
				}
			}
			for _, lib := range []string{"x509", "SANs", "current time", "doesn't"} {
				if strings.Contains(found, lib) || strings.Contains(fix, lib) {
					t.Errorf("the check quotes the library (%q): found %q, fix %q", lib, found, fix)
				}
			}
			// The console's preflight page shows the stored result.
			browserDo(t, ctx, "open the preflight of "+slug, chromedp.Navigate(gw.URL+"/console/preflight?site="+slug))
			waitForTitle(t, ctx, "Preflight")
			saveScreenshot(t, ctx, "TestChromiumPreflightCertificateInPlainWords-"+slug+".png")
			row := browserResult(t, ctx, "read the tls check", chromedp.Text(chromedp.CSS(`tr[id="check-tls"]`)))
			if !strings.Contains(row, c.found[0]) || strings.Contains(row, "x509") {
				t.Errorf("the console's tls row: %q", row)
			}
		})
	}
}
