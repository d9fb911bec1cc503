package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
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
	// wire sends the calls with a wireCaller per caller instead of the
	// client: a lighter load generator.
	wire bool
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
	// Added is, for each call whose reply said how long the gateway was
	// with the ERP (Server-Timing erp), its latency at the client minus
	// that time: what the gateway, and the hop to it, added to that call.
	// Sorted.
	Added []time.Duration
	// Inside is, for the same calls, the part of Added spent inside the
	// gateway after it had read the request (Server-Timing total minus
	// erp). Sorted.
	Inside   []time.Duration
	Outcomes map[string]int // every non-success outcome
	CPU      cpuUse
}

func (r loadResult) rps() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Window.Seconds()
}

func (r loadResult) percentile(p float64) time.Duration {
	return percentileOf(r.Latencies, p)
}

// percentileOf is the p-th percentile of sorted (nearest rank).
func percentileOf(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
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
	out.Added = append(append(make([]time.Duration, 0, len(r.Added)+len(other.Added)), r.Added...), other.Added...)
	slices.Sort(out.Added)
	out.Inside = append(append(make([]time.Duration, 0, len(r.Inside)+len(other.Inside)), r.Inside...), other.Inside...)
	slices.Sort(out.Inside)
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
	var (
		seq     atomic.Int64
		mu      sync.Mutex
		records = make([]callRecord, 0, 1<<16)
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
			local := make([]callRecord, 0, 1024)
			var snd sender = clientSender{client}
			if spec.wire {
				wc := newWireCaller()
				defer wc.close()
				snd = wc
			}
			for runCtx.Err() == nil {
				start := time.Now()
				outcome, timing := doCall(ctx, snd, spec.call(seq.Add(1)-1), spec.check)
				local = append(local, callRecord{start, time.Now(), outcome, timing})
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

	res := summarise(records, windowStart, windowEnd)
	res.Concurrency, res.Window = spec.concurrency, spec.duration
	if spec.sample != nil {
		res.CPU = first.until(last)
		res.Window = res.CPU.wall
	}
	return res
}

// callRecord is one call of a run.
type callRecord struct {
	start, end time.Time
	outcome    string
	timing     serverTiming
}

// serverTiming is what a gateway reply's Server-Timing header says: the
// call's time with the ERP and the time from having read the request to
// the reply; -1 where it does not say.
type serverTiming struct {
	erp, total time.Duration
}

var noTiming = serverTiming{erp: -1, total: -1}

// summarise counts the calls that both started and ended in [from, to]:
// their latencies, their outcomes, and for each successful call whose
// reply gave the gateway's time with the ERP, its latency minus that time.
func summarise(records []callRecord, from, to time.Time) loadResult {
	res := loadResult{Outcomes: map[string]int{}}
	for _, r := range records {
		if r.start.Before(from) || r.end.After(to) {
			continue
		}
		res.Calls++
		res.Latencies = append(res.Latencies, r.end.Sub(r.start))
		if r.outcome != "" {
			res.Outcomes[r.outcome]++
		} else if r.timing.erp >= 0 {
			res.Added = append(res.Added, r.end.Sub(r.start)-r.timing.erp)
			if r.timing.total >= r.timing.erp {
				res.Inside = append(res.Inside, r.timing.total-r.timing.erp)
			}
		}
	}
	slices.Sort(res.Latencies)
	slices.Sort(res.Added)
	slices.Sort(res.Inside)
	return res
}

// sender sends one step and returns the answer's status, header and body.
type sender interface {
	send(ctx context.Context, s step) (int, http.Header, []byte, error)
}

// badStep is a step that could not be made into a request; doCall names
// it as such, not as a transport error.
type badStep struct{ err error }

func (e badStep) Error() string { return e.err.Error() }

// clientSender sends with net/http's client.
type clientSender struct{ client *http.Client }

func (c clientSender) send(ctx context.Context, s step) (int, http.Header, []byte, error) {
	var body io.Reader
	if s.body != nil {
		body = bytes.NewReader(s.body)
	}
	req, err := http.NewRequestWithContext(ctx, s.method, s.url, body)
	if err != nil {
		return 0, nil, nil, badStep{err}
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, raw, nil
}

// doCall sends the steps of one call in order and classifies the last
// response (any failing step ends the call), with what the last response's
// Server-Timing header says.
func doCall(ctx context.Context, snd sender, steps []step, check checkFunc) (outcome string, timing serverTiming) {
	timing = noTiming
	for _, s := range steps {
		status, header, body, err := snd.send(ctx, s)
		var bad badStep
		if errors.As(err, &bad) {
			return "request: " + bad.Error(), noTiming
		}
		if err != nil {
			return transportOutcome(err), noTiming
		}
		if out := check(status, header, body); out != "" {
			return out, noTiming
		}
		h := header.Get("Server-Timing")
		timing = serverTiming{erp: timingEntry(h, "erp"), total: timingEntry(h, "total")}
	}
	return "", timing
}

// timingEntry reads the duration of the entry called name in a
// Server-Timing header ("erp;dur=20.134, total;dur=21.002", in
// milliseconds), or -1 without one.
func timingEntry(h, name string) time.Duration {
	for entry := range strings.SplitSeq(h, ",") {
		n, params, _ := strings.Cut(strings.TrimSpace(entry), ";")
		if n != name {
			continue
		}
		for p := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
					return time.Duration(f * float64(time.Millisecond))
				}
			}
		}
	}
	return -1
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
