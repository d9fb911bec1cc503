package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// step is one HTTP request of a call. A call through the gateway is one
// step (the MCP request); the same call made directly to the ERP is the
// upstream requests the connector makes, replayed in order.
type step struct {
	method string
	url    string
	header http.Header
	body   []byte
}

// checkFunc classifies a response: "" for success, else a short outcome
// such as "RATE_LIMITED" or "http_503".
type checkFunc func(status int, header http.Header, body []byte) string

// loadSpec is one closed-loop run: concurrency callers, each sending its
// next call as soon as the previous one ended.
type loadSpec struct {
	concurrency int
	warmup      time.Duration
	duration    time.Duration
	// call returns the steps of call number seq (counted across callers).
	call  func(seq int64) []step
	check checkFunc
	// onWindow, if set, runs in its own goroutine for the measured window,
	// until its context ends (samplers of memory and goroutines).
	onWindow func(ctx context.Context)
	// sample returns the CPU times of the parts, read at both ends of the
	// measured window.
	sample func() cpuSample
}

// loadResult is what a run measured inside its window.
type loadResult struct {
	Concurrency int
	Calls       int
	Window      time.Duration
	Latencies   []time.Duration // sorted
	Outcomes    map[string]int  // every non-success outcome
	CPU         cpuUse
}

func (r loadResult) rps() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Window.Seconds()
}

func (r loadResult) percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.Latencies))*p+0.5) - 1
	return r.Latencies[max(0, min(i, len(r.Latencies)-1))]
}

// perCall divides d over the calls of the window.
func (r loadResult) perCall(d time.Duration) time.Duration {
	if r.Calls == 0 {
		return 0
	}
	return d / time.Duration(r.Calls)
}

func (r loadResult) failures() int {
	n := 0
	for _, c := range r.Outcomes {
		n += c
	}
	return n
}

// merge adds the calls and CPU of other, a run of the same spec made at
// another time, to r.
func (r loadResult) merge(other loadResult) loadResult {
	out := loadResult{Concurrency: r.Concurrency, Calls: r.Calls + other.Calls, Window: r.Window + other.Window, Outcomes: map[string]int{}}
	out.Latencies = append(append(make([]time.Duration, 0, len(r.Latencies)+len(other.Latencies)), r.Latencies...), other.Latencies...)
	slices.Sort(out.Latencies)
	for _, m := range []map[string]int{r.Outcomes, other.Outcomes} {
		for k, v := range m {
			out.Outcomes[k] += v
		}
	}
	a, b := r.CPU, other.CPU
	out.CPU = cpuUse{wall: a.wall + b.wall, client: a.client + b.client, sim: a.sim + b.sim, pg: a.pg + b.pg, proxy: a.proxy + b.proxy,
		gateways: a.gateways + b.gateways, machineBusy: a.machineBusy + b.machineBusy, machineTotal: a.machineTotal + b.machineTotal}
	return out
}

// newLoadClient returns an HTTP client that keeps one connection per
// caller, so a run measures requests, not TCP handshakes.
func newLoadClient(concurrency int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        concurrency + 16,
			MaxIdleConnsPerHost: concurrency + 16,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
		Timeout: 2 * time.Minute,
	}
}

// runLoad runs spec with client. Calls that start in the warm-up are not
// counted; the measured window starts after it and lasts spec.duration.
// Callers stop when the window ends, and the run waits for their last
// calls (bounded by the client's timeout).
func runLoad(ctx context.Context, client *http.Client, spec loadSpec) loadResult {
	type record struct {
		start, end time.Time
		outcome    string
	}
	var (
		seq     atomic.Int64
		mu      sync.Mutex
		records = make([]record, 0, 1<<16)
		wg      sync.WaitGroup
	)
	begin := time.Now()
	windowStart := begin.Add(spec.warmup)
	windowEnd := windowStart.Add(spec.duration)
	runCtx, cancel := context.WithDeadline(ctx, windowEnd)
	defer cancel()
	for range spec.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]record, 0, 1024)
			for runCtx.Err() == nil {
				start := time.Now()
				outcome := doCall(ctx, client, spec.call(seq.Add(1)-1), spec.check)
				local = append(local, record{start, time.Now(), outcome})
			}
			mu.Lock()
			records = append(records, local...)
			mu.Unlock()
		}()
	}
	// CPU is sampled at the window's edges; the window's calls are those
	// that both started and ended inside it.
	var first, last cpuSample
	windowDone := make(chan struct{})
	go func() {
		defer close(windowDone)
		time.Sleep(time.Until(windowStart))
		if spec.sample != nil {
			first = spec.sample()
		}
		wctx, wcancel := context.WithDeadline(ctx, windowEnd)
		defer wcancel()
		if spec.onWindow != nil {
			spec.onWindow(wctx)
		}
		<-wctx.Done()
		if spec.sample != nil {
			last = spec.sample()
		}
	}()
	<-windowDone
	wg.Wait()

	res := loadResult{Concurrency: spec.concurrency, Window: spec.duration, Outcomes: map[string]int{}}
	for _, r := range records {
		if r.start.Before(windowStart) || r.end.After(windowEnd) {
			continue
		}
		res.Calls++
		res.Latencies = append(res.Latencies, r.end.Sub(r.start))
		if r.outcome != "" {
			res.Outcomes[r.outcome]++
		}
	}
	slices.Sort(res.Latencies)
	if spec.sample != nil {
		res.CPU = first.until(last)
		res.Window = res.CPU.wall
	}
	return res
}

// doCall sends the steps of one call in order and classifies the last
// response (any failing step ends the call).
func doCall(ctx context.Context, client *http.Client, steps []step, check checkFunc) string {
	for _, s := range steps {
		var body io.Reader
		if s.body != nil {
			body = bytes.NewReader(s.body)
		}
		req, err := http.NewRequestWithContext(ctx, s.method, s.url, body)
		if err != nil {
			return "request: " + err.Error()
		}
		for k, v := range s.header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			return transportOutcome(err)
		}
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return transportOutcome(err)
		}
		if out := check(resp.StatusCode, resp.Header, raw); out != "" {
			return out
		}
	}
	return ""
}

func transportOutcome(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return "connection_refused"
	case strings.Contains(msg, "connection reset"):
		return "connection_reset"
	case strings.Contains(msg, "EOF"):
		return "connection_closed"
	case strings.Contains(msg, "deadline exceeded"), strings.Contains(msg, "Timeout"):
		return "client_timeout"
	}
	return "transport_error"
}

// checkDirect accepts a 200 answer whose body is JSON, as a plain client
// of the ERP would check it: Frappe's object with data or message, or
// Acumatica's array of records.
func checkDirect(status int, _ http.Header, body []byte) string {
	if status != http.StatusOK {
		return fmt.Sprintf("http_%d", status)
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		var records []json.RawMessage
		if err := json.Unmarshal(body, &records); err != nil {
			return "invalid_json"
		}
		return ""
	}
	var v struct {
		Data    json.RawMessage `json:"data"`
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "invalid_json"
	}
	return ""
}

// mcpAnswer is the part of a JSON-RPC answer to tools/call the benchmark
// reads.
type mcpAnswer struct {
	Result *struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Error *struct {
				Code              string `json:"code"`
				RetryAfterSeconds int    `json:"retry_after_seconds"`
			} `json:"error"`
		} `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// jsonRPCBody returns the JSON-RPC message of an MCP answer, which the
// streamable HTTP transport may send as a one-event SSE stream.
func jsonRPCBody(header http.Header, body []byte) []byte {
	if !strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
		return body
	}
	var msg []byte
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			msg = bytes.TrimSpace(data)
		}
	}
	return msg
}

// checkMCP accepts a successful tools/call answer; a tool error yields its
// code.
func checkMCP(status int, header http.Header, body []byte) string {
	if status != http.StatusOK {
		return fmt.Sprintf("http_%d", status)
	}
	var a mcpAnswer
	if err := json.Unmarshal(jsonRPCBody(header, body), &a); err != nil {
		return "invalid_json"
	}
	switch {
	case a.Error != nil:
		return fmt.Sprintf("jsonrpc_%d", a.Error.Code)
	case a.Result == nil:
		return "no_result"
	case a.Result.StructuredContent.Error != nil:
		return a.Result.StructuredContent.Error.Code
	case a.Result.IsError:
		return "tool_error"
	}
	return ""
}

// toolCall returns the JSON-RPC body of a stateless tools/call.
func toolCall(id int64, tool string, args map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args},
	})
	return b
}

// mcpHeader returns the headers of a service MCP request with token.
func mcpHeader(token string) http.Header {
	return http.Header{
		"Content-Type":            {"application/json"},
		"Accept":                  {"application/json, text/event-stream"},
		"Mcp-Protocol-Version":    {"2025-06-18"},
		"X-Erpgate-Service-Token": {token},
	}
}

// toolError is a tool call that ended with an error envelope.
type toolError struct {
	Code string
}

func (e *toolError) Error() string { return "tool error " + e.Code }

// mcpCall makes one tools/call and returns its structuredContent, or a
// *toolError for a tool error.
func mcpCall(ctx context.Context, client *http.Client, endpoint, token, tool string, args map[string]any) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(toolCall(1, tool, args)))
	if err != nil {
		return nil, err
	}
	req.Header = mcpHeader(token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", tool, resp.StatusCode, bytes.TrimSpace(raw))
	}
	var a struct {
		Result *struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(jsonRPCBody(resp.Header, raw), &a); err != nil {
		return nil, fmt.Errorf("%s: %v", tool, err)
	}
	if a.Result == nil {
		return nil, fmt.Errorf("%s: JSON-RPC error %s", tool, a.Error)
	}
	if out := checkMCP(resp.StatusCode, resp.Header, raw); out != "" {
		return nil, &toolError{Code: out}
	}
	return a.Result.StructuredContent, nil
}
