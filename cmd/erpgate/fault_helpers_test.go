package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
)

// Helpers of the fault, shutdown and scale-out tests: raw service MCP
// calls whose every outcome (HTTP status, request id, tool error code, the
// text a model would see) can be checked, and an upstream wrapper that
// counts requests in flight.

// serviceOutcome is how one /service/mcp tools/call ended.
type serviceOutcome struct {
	Status     int
	RequestID  string
	Code       string // tool error code; "" for a successful result
	RetryAfter int    // retry_after_seconds of a tool error
	Body       string // the whole answer, for checks on what it reveals
	Err        error  // transport failure
}

func (o serviceOutcome) ok() bool { return o.Err == nil && o.Status == http.StatusOK && o.Code == "" }

func (o serviceOutcome) String() string {
	if o.Err != nil {
		return "transport error: " + o.Err.Error()
	}
	return fmt.Sprintf("HTTP %d code=%q body=%.300s", o.Status, o.Code, o.Body)
}

// callService makes one stateless tools/call through /service/mcp.
func callService(ctx context.Context, client *http.Client, baseURL, token, tool string, args map[string]any) serviceOutcome {
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/service/mcp", bytes.NewReader(body))
	if err != nil {
		return serviceOutcome{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("X-Erpgate-Service-Token", token)
	resp, err := client.Do(req)
	if err != nil {
		return serviceOutcome{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	out := serviceOutcome{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id"), Body: string(raw), Err: err}
	if err != nil || resp.StatusCode != http.StatusOK {
		return out
	}
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
				Error *struct {
					Code              string `json:"code"`
					RetryAfterSeconds int    `json:"retry_after_seconds"`
				} `json:"error"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	switch err := json.Unmarshal(msg, &rpc); {
	case err != nil:
		out.Code = "UNREADABLE_ANSWER"
	case rpc.Result == nil:
		out.Code = "JSONRPC_ERROR"
	case rpc.Result.StructuredContent.Error != nil:
		out.Code = rpc.Result.StructuredContent.Error.Code
		out.RetryAfter = rpc.Result.StructuredContent.Error.RetryAfterSeconds
	case rpc.Result.IsError:
		out.Code = "TOOL_ERROR_WITHOUT_CODE"
	}
	return out
}

// revealsInternals reports text a model must never see in an error: how
// erpgate reaches its database or the ERP.
func revealsInternals(body string) bool {
	lower := strings.ToLower(body)
	for _, s := range []string{"dial tcp", "connection refused", "127.0.0.1", "pgx", "sqlstate", "postgres", "goroutine", "panic"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// inFlightGauge wraps an upstream handler and records the most requests it
// ever served at once; hold, while set, blocks requests under pathPrefix
// until released.
type inFlightGauge struct {
	next  http.Handler
	now   atomic.Int64
	peak  atomic.Int64
	total atomic.Int64
	delay time.Duration

	mu         sync.Mutex
	holdPrefix string
	hold       chan struct{}
}

func (g *inFlightGauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		g.next.ServeHTTP(w, r)
		return
	}
	n := g.now.Add(1)
	defer g.now.Add(-1)
	g.total.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.mu.Lock()
	hold := g.hold
	if !strings.HasPrefix(r.URL.Path, g.holdPrefix) {
		hold = nil
	}
	g.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if g.delay > 0 {
		select {
		case <-time.After(g.delay):
		case <-r.Context().Done():
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// holdRequests makes requests under prefix wait until the returned release
// function is called.
func (g *inFlightGauge) holdRequests(prefix string) (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.holdPrefix, g.hold = prefix, ch
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.hold = nil
			g.mu.Unlock()
			close(ch)
		})
	}
}

// waitFor polls cond every 10 ms until it holds, failing the test after
// limit. The limit only turns a hang into a failure; nothing asserts how
// fast cond became true.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting (%s) for: %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sharedErpgateBinary builds the erpgate binary once per test binary run,
// for the tests that start real processes. Its scratch directory outlives
// the run; the next run's NewScratchDir removes it.
var sharedErpgateBinary = sync.OnceValues(func() (string, error) {
	dir, err := pgcluster.NewScratchDir("erpgate-testbin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "erpgate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// registerFrappeAt registers a Frappe site at baseURL (a simulator behind
// a test wrapper) with user's API credential, and returns it with a fresh
// service token.
func (g *gateway) registerFrappeAt(t *testing.T, slug, baseURL string, user frappetest.User) devSite {
	t.Helper()
	site, err := g.admin.ensureSite(context.Background(), devState{}, siteRequest{
		Slug: slug, Kind: "frappe", DisplayName: "Test " + slug, BaseURL: baseURL,
		Credentials: map[string]string{"api_key": user.APIKey, "api_secret": user.APISecret},
	})
	if err != nil {
		t.Fatalf("register %s: %v", slug, err)
	}
	return site
}
