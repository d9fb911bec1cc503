package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// BenchmarkServiceToolCall is one tools/call of a 20-row customer list
// through /service/mcp of a whole gateway (and, for Frappe, through
// /sites/{slug}/mcp as a signed-in person), as the benchmark suite's load
// generator sends it, against each simulator, all in this process: for
// allocation counts and profiles of the gateway's path (-memprofile,
// -cpuprofile), which `go tool task bench` measures across processes.
func BenchmarkServiceToolCall(b *testing.B) {
	gw := startGateway(b, "", map[string]string{
		"ERPGATE_LOG_LEVEL":              "info",
		"ERPGATE_LIMIT_USER_PER_MINUTE":  "100000000",
		"ERPGATE_LIMIT_SITE_PER_MINUTE":  "100000000",
		"ERPGATE_LIMIT_USER_CONCURRENCY": "1000",
		"ERPGATE_LIMIT_SITE_CONCURRENCY": "1000",
	})
	const (
		list   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":20}}}`
		list26 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":20},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	)
	// The same call on protocol 2026-07-28: _meta, Mcp-Method and
	// Mcp-Name, no initialize.
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_customers"}
	for _, p := range []struct {
		name    string
		oauth   bool
		body    string
		headers map[string]string
	}{
		{"frappe", false, list, nil},
		{"frappe_2026-07-28", false, list26, modern},
		{"frappe_oauth", true, list, nil},
		{"frappe_oauth_2026-07-28", true, list26, modern},
	} {
		// Each path has its own simulator and site, set up once: -count
		// runs the body again, and a site with an OAuth connection keeps
		// its base URL.
		sim := frappetest.NewServer(frappetest.Options{})
		defer sim.Close()
		slug := strings.ReplaceAll(p.name, "_", "-")
		var endpoint string
		var headers map[string]string
		if !p.oauth {
			site := gw.registerFrappe(b, slug, sim, userWithRole(b, sim, "service"))
			endpoint, headers = site.ServiceMCPURL, withHeader(p.headers, "X-Erpgate-Service-Token", site.ServiceToken)
		} else {
			// A person signed in through the real flow: every measured
			// call is a warm call of a signed-in user.
			site := frappeOAuthSite(b, gw, slug, sim)
			ctx := context.Background()
			clientID, err := signin.Register(ctx, gw.URL)
			if err != nil {
				b.Fatal(err)
			}
			tok, err := signin.SignIn(ctx, gw.URL, clientID, site.MCPURL, frappeLogin(userWithRole(b, sim, "all-companies")))
			if err != nil {
				b.Fatal(err)
			}
			endpoint, headers = site.MCPURL, withHeader(p.headers, "Authorization", "Bearer "+tok.AccessToken)
		}
		b.Run(p.name, func(b *testing.B) { benchToolCall(b, endpoint, headers, p.body) })
	}
	b.Run("acumatica", func(b *testing.B) {
		// The bot's connection as `erpgate dev` registers it: the
		// simulator's password-grant application and its API user.
		acu := acumaticatest.NewHandler(acumaticatest.Options{})
		srv := httptest.NewServer(acu)
		defer srv.Close()
		site, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, acumaticaService(acu.ServiceLogin()), "acu", "Bench Acumatica", srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		benchToolCall(b, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"acumatica_list_customers","arguments":{"top":20}}}`)
	})
}

// withHeader is headers with one more.
func withHeader(headers map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range headers {
		out[k] = v
	}
	return out
}

// benchToolCall measures body sent to the MCP URL endpoint, with headers
// (the credential among them) on top of the usual ones.
func benchToolCall(b *testing.B, endpoint string, headers map[string]string, body string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	call := func() {
		req, err := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader([]byte(body)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		reply, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), `"structuredContent":{"`) || strings.Contains(string(reply), `"isError":true`) {
			b.Fatalf("HTTP %d: %.300s (%v)", resp.StatusCode, reply, err)
		}
	}
	call() // warm: token, credential and tool caches, connections, the bot's ERP token
	b.ReportAllocs()
	b.ResetTimer()
	before := processCPU(b)
	n := 0
	for b.Loop() {
		call()
		n++
	}
	// The CPU of the whole process (client, gateway and simulator; PostgreSQL
	// runs apart): what a change to the gateway's path moves, where ns/op is
	// the time of one call after another.
	b.ReportMetric(float64(processCPU(b)-before)/float64(n), "cpu-ns/op")
}

// processCPU is the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
