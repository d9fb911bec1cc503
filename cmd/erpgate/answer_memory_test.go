package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestHeldCallsWithAnswersJustUnderAMegabyteStayWithinTheMemoryRule: an
// attacker registers sixteen fake Frappe sites (self-service registration
// lets anyone do so) whose customer list answers just under 1 MiB (long
// customer names), announced or not (chunked, as behind a compressing
// proxy), and sends eight calls to each at once, three service tokens a
// site, within every per-caller and per-site limit. The fake ERPs send
// all of each answer but its last byte, and hold that. A replica of 144 calls with an answer budget of 4 MiB is
// allowed, by docs/deploy.md's memory rule, 6 × 4 MiB and what its held
// calls may hold besides: its live heap must stay within that. Before,
// answers under 1 MiB were never charged against the answer budget: every
// call read its answer whole, 128 MiB at once, uncounted (and would have
// gone on to hold its parsed form and its reply too).
func TestHeldCallsWithAnswersJustUnderAMegabyteStayWithinTheMemoryRule(t *testing.T) {
	t.Run("announced", func(t *testing.T) { heldCallsWithAnswersJustUnderAMegabyte(t, true) })
	t.Run("unknown length", func(t *testing.T) { heldCallsWithAnswersJustUnderAMegabyte(t, false) })
}

func heldCallsWithAnswersJustUnderAMegabyte(t *testing.T, announced bool) {
	const (
		sites, perSite = 16, 8 // eight within ERPGATE_LIMIT_SITE_CONCURRENCY's 10
		tokens         = 3     // within ERPGATE_LIMIT_USER_CONCURRENCY's 3 each
		calls          = sites * perSite
		replicaCalls   = 144 // room for every call outside the reserve
		budget         = 4 << 20
		answerSize     = 1<<20 - 16<<10
	)
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_LIMIT_REPLICA_CALLS":        strconv.Itoa(replicaCalls),
		"ERPGATE_LIMIT_REPLICA_ANSWER_BYTES": strconv.Itoa(budget),
	})
	ctx := context.Background()
	erp := &bigListERP{size: answerSize, announced: announced, last: make(chan struct{})}
	release := sync.OnceFunc(func() { close(erp.last) })
	defer release()
	var callers [][]string // per site, its service tokens
	for i := range sites {
		sim := frappetest.NewHandler(frappetest.Options{})
		srv := httptest.NewServer(erp.wrap(sim))
		defer srv.Close()
		var user frappetest.User
		for _, u := range sim.Users() {
			if u.Role == "service" {
				user = u
			}
		}
		site, err := gw.admin.ensureSite(ctx, devState{}, siteRequest{
			Slug: fmt.Sprintf("big-%d", i), Kind: "frappe", DisplayName: fmt.Sprintf("Big %d", i), BaseURL: srv.URL,
			Credentials: map[string]string{"api_key": user.APIKey, "api_secret": user.APISecret},
		})
		if err != nil {
			t.Fatalf("register site %d: %v", i, err)
		}
		toks := []string{site.ServiceToken}
		for j := 1; j < tokens; j++ {
			var created tokenResponse
			if err := gw.admin.do(ctx, http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": fmt.Sprintf("bot %d", j)}, &created); err != nil {
				t.Fatal(err)
			}
			toks = append(toks, created.Token)
		}
		callers = append(callers, toks)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: calls}, Timeout: 2 * time.Minute}
	// Warm every site's path (and the fake ERPs' answer) before the
	// baseline.
	for _, toks := range callers {
		if o := callServiceDiscarding(ctx, client, gw.URL, toks[0], answerSize); !o.ok() {
			t.Fatalf("warm-up call: %v", o)
		}
	}
	erp.holding.Store(true)
	before := liveHeap()

	outcomes := make(chan serviceOutcome, calls)
	for i := range calls {
		token := callers[i%sites][(i/sites)%tokens]
		go func() { outcomes <- callServiceDiscarding(ctx, client, gw.URL, token, answerSize) }()
	}
	// Every call waits on its ERP, which holds its answer's last byte;
	// the heap then settles at what the calls hold.
	for deadline := time.Now().Add(time.Minute); erp.arrived.Load() < calls; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // turns a hang into a failure
			t.Fatalf("only %d of %d calls reached their ERP", erp.arrived.Load(), calls)
		}
	}
	held := settledHeap() - int64(before)
	release()
	failed := 0
	for range calls {
		select {
		case o := <-outcomes:
			if !o.ok() {
				if failed++; failed <= 3 {
					t.Errorf("a call: %v", o)
				}
			}
		case <-time.After(2 * time.Minute): // turns a hang into a failure
			t.Fatal("a call never ended")
		}
	}
	// docs/deploy.md: 6 × the answer budget, and for each held call 60
	// KiB and six times the most an answer not charged against the budget
	// may be (64 KiB).
	rule := int64(6*budget + replicaCalls*(60<<10+6*64<<10))
	t.Logf("%d calls of %d KiB answers: the live heap grew by %.1f MiB; the memory rule allows %.1f MiB",
		calls, answerSize>>10, float64(held)/(1<<20), float64(rule)/(1<<20))
	if held > rule {
		t.Errorf("%d calls with answers of %d KiB held %.1f MiB of live heap at once; docs/deploy.md's rule allows %.1f MiB for a replica of %d calls and an answer budget of %d MiB",
			calls, answerSize>>10, float64(held)/(1<<20), float64(rule)/(1<<20), replicaCalls, budget>>20)
	}
}

// settledHeap samples the live heap until it stops growing (the calls
// it measures hold still), and returns the largest it saw.
func settledHeap() int64 {
	var peak, last int64
	for still := 0; still < 5; {
		h := int64(liveHeap())
		if h > last+256<<10 {
			still = 0
		} else {
			still++
		}
		last, peak = h, max(peak, h)
	}
	return peak
}

// bigListERP stands in front of Frappe simulators: their customer lists
// answer with the simulator's rows, each customer's name made long enough
// that the answer is size bytes, announced or not. While holding, a list's
// answer goes out but for its last byte, which waits until last is
// closed.
type bigListERP struct {
	size      int
	announced bool
	once      sync.Once
	body      []byte
	holding   atomic.Bool
	arrived   atomic.Int32
	last      chan struct{}
}

func (e *bigListERP) wrap(sim http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/resource/Customer" {
			sim.ServeHTTP(w, r)
			return
		}
		e.once.Do(func() { e.body = padList(sim, r, e.size) })
		w.Header().Set("Content-Type", "application/json")
		if e.announced {
			w.Header().Set("Content-Length", strconv.Itoa(len(e.body)))
		}
		if !e.holding.Load() {
			_, _ = w.Write(e.body)
			return
		}
		e.arrived.Add(1)
		_, _ = w.Write(e.body[:len(e.body)-1])
		http.NewResponseController(w).Flush()
		select {
		case <-e.last:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(e.body[len(e.body)-1:])
	})
}

// padList is sim's answer to r with its rows' customer_name made longer,
// size bytes in all.
func padList(sim http.Handler, r *http.Request, size int) []byte {
	rec := httptest.NewRecorder()
	sim.ServeHTTP(rec, r)
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list.Data) == 0 {
		panic(fmt.Sprintf("the simulator's customer list: %v %.200s", err, rec.Body.String()))
	}
	raw, _ := json.Marshal(list)
	pad := (size - len(raw)) / len(list.Data)
	for i, row := range list.Data {
		name, _ := row["customer_name"].(string)
		extra := pad
		if i == 0 {
			extra += (size - len(raw)) % len(list.Data)
		}
		row["customer_name"] = name + strings.Repeat("x", extra)
	}
	out, _ := json.Marshal(list)
	if len(out) != size {
		panic(fmt.Sprintf("padded list of %d bytes, want %d", len(out), size))
	}
	return out
}

// callServiceDiscarding calls list_customers (20 rows) through
// /service/mcp and reads its reply without keeping it: the test's own
// heap stays out of the measure. A reply that is not a JSON-RPC result
// without error is kept, for its message.
func callServiceDiscarding(ctx context.Context, client *http.Client, baseURL, token string, least int) serviceOutcome {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_customers","arguments":{"limit":20}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/service/mcp", strings.NewReader(body))
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
	var head bytes.Buffer
	n, err := io.Copy(io.Discard, io.TeeReader(resp.Body, &limitedWriter{w: &head, n: 4 << 10}))
	out := serviceOutcome{Status: resp.StatusCode, Err: err}
	if err == nil && resp.StatusCode == http.StatusOK && (n < int64(least) || bytes.Contains(head.Bytes(), []byte(`"isError":true`))) {
		out.Code, out.Body = "not a list", head.String()
	}
	return out
}

// limitedWriter keeps the first n bytes written.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if k := min(l.n, len(p)); k > 0 {
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
