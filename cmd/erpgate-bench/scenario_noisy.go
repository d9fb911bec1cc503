package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The noisy neighbour: one tenant's service token holds standing GET
// streams and request bodies sent a byte at a time, while other tenants
// call as usual.
const (
	noisyStreams      = 1000
	noisyDrips        = 200
	noisyQuietCallers = 8
	// noisyDripEvery is how often each slow body sends its next byte.
	noisyDripEvery = 200 * time.Millisecond
)

type noisyScenario struct {
	Name    string     `json:"name"`
	Machine machineRef `json:"machine"`
	// Concurrency is the other tenants' callers.
	Concurrency int `json:"concurrency"`
	Streams     int `json:"noisy_get_streams"`
	Drips       int `json:"noisy_slow_bodies"`
	// Alone and Abused are the other tenants' figures without the abuse
	// and during it.
	Alone  figures `json:"alone"`
	Abused figures `json:"during_abuse"`
	// P50Ratio and P99Ratio are during the abuse over alone.
	P50Ratio float64 `json:"p50_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
	// NoisyAnswers counts how the gateway answered the noisy tenant.
	NoisyAnswers map[string]int `json:"noisy_answers"`
	Targets      []target       `json:"targets"`
	Notes        []string       `json:"notes,omitempty"`
}

// noisyNeighbour measures other tenants' calls alone, then while one
// tenant holds noisyStreams GET streams and keeps noisyDrips slow bodies
// arriving (each one answered is replaced by a new one).
func (b *bench) noisyNeighbour(ctx context.Context, g *gatewayProc, tab *table) (any, error) {
	sc := &noisyScenario{Name: "noisy_neighbour", Machine: b.machine.ref(), Concurrency: noisyQuietCallers,
		Streams: noisyStreams, Drips: noisyDrips}
	// b.tokens[j] is on site j%100: the noisy tenant is site 0, the others
	// sites 1 to noisyQuietCallers.
	noisy := b.tokens[0]
	body := toolCall(1, overheadTool, overheadArgs)
	steps := make([][]step, noisyQuietCallers)
	for i := range steps {
		steps[i] = []step{{method: http.MethodPost, url: g.URL + "/service/mcp", header: mcpHeader(b.tokens[1+i]), body: body}}
	}
	run := func() loadResult {
		client := newLoadClient(noisyQuietCallers)
		defer client.CloseIdleConnections()
		return runLoad(ctx, client, loadSpec{
			concurrency: noisyQuietCallers, warmup: b.opts.warmup, duration: b.opts.window,
			call:  func(seq int64) []step { return steps[seq%int64(len(steps))] },
			check: checkMCP,
		})
	}
	alone := run()
	ab, err := startAbuse(ctx, g.URL, noisy)
	if err != nil {
		return nil, err
	}
	abused := run()
	sc.NoisyAnswers = ab.stop()
	sc.Alone, sc.Abused = figuresOf(alone), figuresOf(abused)
	sc.P50Ratio = ratio(sc.Abused.P50MS, sc.Alone.P50MS)
	sc.P99Ratio = ratio(sc.Abused.P99MS, sc.Alone.P99MS)
	sc.Targets = []target{
		{Target: "no call of another tenant fails during the abuse", Value: float64(abused.failures()), Unit: "calls", Met: abused.failures() == 0 && abused.Calls > 0},
		{Target: "another tenant's p99 during the abuse <= 3 x alone", Value: sc.P99Ratio, Unit: "x", Met: sc.P99Ratio <= 3},
	}
	sc.Notes = []string{
		fmt.Sprintf("%d callers on %d other sites call %s; the noisy tenant (one service token) holds %d GET streams opened once and keeps %d bodies arriving a byte every %v, replacing each one answered",
			noisyQuietCallers, noisyQuietCallers, overheadTool, noisyStreams, noisyDrips, noisyDripEvery),
		"the gateway's defaults: its share of a replica 25 %, body timeout 30 s",
	}
	tab.add("noisy_neighbour", fmt.Sprintf("alone, c=%d", noisyQuietCallers), fmt.Sprintf("%.0f calls/s, p50 %.2f ms, p99 %.2f ms", sc.Alone.RPS, sc.Alone.P50MS, sc.Alone.P99MS))
	tab.add("", "during the abuse", fmt.Sprintf("%.0f calls/s, p50 %.2f ms (%.2fx), p99 %.2f ms (%.2fx), failed %d", sc.Abused.RPS, sc.Abused.P50MS, sc.P50Ratio, sc.Abused.P99MS, sc.P99Ratio, abused.failures()))
	tab.add("", "noisy tenant's answers", fmt.Sprint(sc.NoisyAnswers))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}

// abuse is the noisy tenant at work.
type abuse struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	answers map[string]int
	conns   []net.Conn
}

func startAbuse(ctx context.Context, base, token string) (*abuse, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &abuse{cancel: cancel, answers: map[string]int{}}
	head := func(method, extra string) string {
		return fmt.Sprintf("%s /service/mcp HTTP/1.1\r\nHost: %s\r\nX-Erpgate-Service-Token: %s\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n%s\r\n",
			method, u.Host, token, extra)
	}
	dial := func(first string) (net.Conn, error) {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			return nil, err
		}
		if _, err := c.Write([]byte(first)); err != nil {
			_ = c.Close()
			return nil, err
		}
		a.mu.Lock()
		a.conns = append(a.conns, c)
		a.mu.Unlock()
		return c, nil
	}
	// readAnswer records the status of the answer on c (or why none came).
	readAnswer := func(kind string, c net.Conn) {
		status := "no answer"
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			status = resp.Status
		}
		if ctx.Err() != nil {
			return // closed by stop
		}
		a.mu.Lock()
		a.answers[kind+" "+status]++
		a.mu.Unlock()
	}
	for range noisyStreams {
		c, err := dial(head(http.MethodGet, ""))
		if err != nil {
			a.stop()
			return nil, fmt.Errorf("noisy tenant's GET stream: %w", err)
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			readAnswer("GET", c)
		}()
	}
	payload := string(toolCall(1, overheadTool, overheadArgs))
	for range noisyDrips {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for ctx.Err() == nil {
				c, err := dial(head(http.MethodPost, "Content-Type: application/json\r\nContent-Length: 4000\r\n") + payload[:10])
				if err != nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				answered := make(chan struct{})
				go func() {
					defer close(answered)
					readAnswer("slow POST", c)
				}()
				tick := time.NewTicker(noisyDripEvery)
			drip:
				for i := 10; ; i++ {
					select {
					case <-ctx.Done():
						break drip
					case <-answered:
						break drip
					case <-tick.C:
						_, _ = c.Write([]byte{payload[i%len(payload)]})
					}
				}
				tick.Stop()
				_ = c.Close()
				<-answered
			}
		}()
	}
	return a, nil
}

// stop closes every connection of the abuse and returns how the gateway
// answered it.
func (a *abuse) stop() map[string]int {
	a.cancel()
	a.mu.Lock()
	for _, c := range a.conns {
		_ = c.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answers
}
