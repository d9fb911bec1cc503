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
)

// BenchmarkServiceToolCall is one tools/call of a 20-row customer list
// through /service/mcp of a whole gateway, as the benchmark suite's load
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
	b.Run("frappe", func(b *testing.B) {
		sim := frappetest.NewServer(frappetest.Options{})
		defer sim.Close()
		site := gw.registerFrappe(b, "acme", sim, userWithRole(b, sim, "service"))
		benchToolCall(b, site, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":20}}}`, nil)
	})
	// The same call on protocol 2026-07-28: _meta, Mcp-Method and
	// Mcp-Name, no initialize.
	b.Run("frappe_2026-07-28", func(b *testing.B) {
		sim := frappetest.NewServer(frappetest.Options{})
		defer sim.Close()
		site := gw.registerFrappe(b, "acme26", sim, userWithRole(b, sim, "service"))
		benchToolCall(b, site, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":20},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "list_customers"})
	})
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
		benchToolCall(b, site, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"acumatica_list_customers","arguments":{"top":20}}}`, nil)
	})
}

// benchToolCall measures body sent to the site's service MCP URL, with
// headers on top of the usual ones.
func benchToolCall(b *testing.B, site devSite, body string, headers map[string]string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	call := func() {
		req, err := http.NewRequest(http.MethodPost, site.ServiceMCPURL, bytes.NewReader([]byte(body)))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("X-Erpgate-Service-Token", site.ServiceToken)
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
