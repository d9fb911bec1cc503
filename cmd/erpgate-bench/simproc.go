package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// The Frappe simulator runs in its own process (`erpgate-bench sim`), so
// that its CPU time, its memory and its garbage collector are separate from
// the load generator's and the gateway's: every figure can then be
// attributed to one process.

// simHello is the line a simulator process prints once it listens.
type simHello struct {
	PID     int      `json:"pid"`
	Kind    string   `json:"kind"`
	Control string   `json:"control"`
	Sites   []string `json:"sites"`
	// Settings and Credentials register a site of this simulator with its
	// bot's fixed API credential.
	Settings    map[string]any    `json:"settings,omitempty"`
	Credentials map[string]string `json:"credentials"`
	APIKey      string            `json:"api_key"`
	Secret      string            `json:"api_secret"`
	User        string            `json:"user"`
	// Alt is a second ERP user, for the credential rotation measurement.
	AltAPIKey string `json:"alt_api_key"`
	AltSecret string `json:"alt_api_secret"`
	AltUser   string `json:"alt_user"`
	// Person is the login form of a person who signs in through the
	// ERP (OAuth), as the simulator's login page names its fields.
	Person  map[string]string `json:"person"`
	BuildMS int64             `json:"build_ms"`
}

// oauthClient is an authorization-code application registered with the
// simulator (POST /oauth-client on its control port).
type oauthClient struct {
	ID     string `json:"client_id"`
	Secret string `json:"client_secret"`
}

// capturedRequest is one upstream request as the simulator received it.
type capturedRequest struct {
	Method        string `json:"method"`
	RequestURI    string `json:"request_uri"`
	Authorization string `json:"authorization"`
	Accept        string `json:"accept"`
}

// simStats are the simulator's counters since the last reset.
type simStats struct {
	Requests    int64 `json:"requests"`
	MaxInFlight int64 `json:"max_in_flight"`
	// HTTP2 counts the requests that came over HTTP/2.
	HTTP2 int64 `json:"http2_requests"`
}

// benchHandler wraps the simulator with what the benchmark needs to see and
// steer: an upstream latency that can change without restarting (so the
// sites keep their ports), an in-flight gauge, and a capture of requests.
type benchHandler struct {
	sim http.Handler
	// register adds an OAuth application with a redirect URI.
	register func(redirectURI string) oauthClient

	latency  atomic.Int64 // nanoseconds
	inFlight atomic.Int64
	maxIn    atomic.Int64
	requests atomic.Int64
	http2    atomic.Int64

	// replaying turns on the replay mode (replayCache).
	replaying atomic.Bool
	replay    replayCache

	mu        sync.Mutex
	capturing bool
	captured  []capturedRequest
}

func (h *benchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for {
		m := h.maxIn.Load()
		if n <= m || h.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	h.requests.Add(1)
	if r.ProtoMajor == 2 {
		h.http2.Add(1)
	}
	h.mu.Lock()
	if h.capturing && len(h.captured) < 64 {
		h.captured = append(h.captured, capturedRequest{
			Method: r.Method, RequestURI: r.RequestURI,
			Authorization: r.Header.Get("Authorization"), Accept: r.Header.Get("Accept"),
		})
	}
	h.mu.Unlock()
	if d := time.Duration(h.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if h.replaying.Load() {
		h.replay.serve(h.sim, w, r)
		return
	}
	h.sim.ServeHTTP(w, r)
}

func (h *benchHandler) control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /latency", func(w http.ResponseWriter, r *http.Request) {
		d, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.latency.Store(int64(d))
	})
	mux.HandleFunc("POST /capture", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.capturing, h.captured = true, nil
		h.mu.Unlock()
	})
	mux.HandleFunc("GET /captured", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		out := h.captured
		h.capturing, h.captured = false, nil
		h.mu.Unlock()
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /replay", func(w http.ResponseWriter, r *http.Request) {
		on := r.URL.Query().Get("on") == "1"
		h.replaying.Store(on)
		if !on {
			h.replay.reset()
		}
	})
	mux.HandleFunc("POST /oauth-client", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(h.register(r.URL.Query().Get("redirect_uri")))
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st := simStats{Requests: h.requests.Load(), MaxInFlight: h.maxIn.Load(), HTTP2: h.http2.Load()}
		if r.URL.Query().Get("reset") != "" {
			h.requests.Store(0)
			h.http2.Store(0)
			h.maxIn.Store(h.inFlight.Load())
		}
		_ = json.NewEncoder(w).Encode(st)
	})
	return mux
}

// runSim is `erpgate-bench sim`: it serves one simulator (-erp frappe or
// acumatica) on -ports loopback ports (one per benchmark site) until its
// standard input closes, which happens when the benchmark exits, however it
// exits.
func runSim(args []string) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	ports := fs.Int("ports", 1, "loopback ports to serve the simulator on, one per site")
	extra := fs.Int("extra-invoices", 0, "extra unpaid sales invoices for large reports (Frappe)")
	erp := fs.String("erp", "frappe", "the simulator: frappe or acumatica")
	certFile := fs.String("tls-cert", "", "serve the sites over HTTPS (HTTP/2 offered) with this certificate (PEM); needs -tls-key")
	keyFile := fs.String("tls-key", "", "the certificate's private key (PEM)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	started := time.Now()
	hello := simHello{PID: os.Getpid(), Kind: *erp}
	h := &benchHandler{}
	switch *erp {
	case "frappe":
		sim := newSimulator(*extra)
		h.sim = sim
		u := sim.User("service")
		hello.APIKey, hello.Secret, hello.User = u.APIKey, u.APISecret, u.Email
		hello.Credentials = map[string]string{"api_key": u.APIKey, "api_secret": u.APISecret}
		alt := sim.User("all-companies")
		hello.AltAPIKey, hello.AltSecret, hello.AltUser = alt.APIKey, alt.APISecret, alt.Email
		hello.Person = map[string]string{"usr": alt.Email, "pwd": alt.Password}
		h.register = func(uri string) oauthClient {
			c := sim.RegisterClient(uri)
			return oauthClient{ID: c.ID, Secret: c.Secret}
		}
	case "acumatica":
		// The bot's connection: the simulator's password-grant
		// application and its dedicated API user, as `erpgate dev`
		// registers them.
		sim := acumaticatest.NewHandler(acumaticatest.Options{})
		h.sim = sim
		var service acumaticatest.Client
		for _, c := range sim.Clients() {
			if c.Flow == acumaticatest.FlowPassword {
				service = c
			}
		}
		u := sim.User("service")
		hello.User = u.Username
		hello.Settings = map[string]any{"tenant": sim.Tenant()}
		hello.Credentials = map[string]string{"client_id": service.ID, "client_secret": service.Secret, "username": u.Username, "password": u.Password}
		person := sim.User(acumaticatest.RoleFull)
		hello.Person = map[string]string{"username": person.Username, "password": person.Password}
		h.register = func(uri string) oauthClient {
			c := sim.RegisterClient(uri)
			return oauthClient{ID: c.ID, Secret: c.Secret}
		}
	default:
		fmt.Fprintln(os.Stderr, "sim: -erp must be frappe or acumatica")
		return 2
	}
	hello.BuildMS = time.Since(started).Milliseconds()

	var servers []*http.Server
	serve := func(handler http.Handler, tls bool) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		if tls {
			// ServeTLS offers HTTP/2 (ALPN), as ERPs behind HTTPS do.
			go func() { _ = srv.ServeTLS(ln, *certFile, *keyFile) }()
			return "https://" + ln.Addr().String(), nil
		}
		go func() { _ = srv.Serve(ln) }()
		return "http://" + ln.Addr().String(), nil
	}
	ctl, err := serve(h.control(), false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sim:", err)
		return 1
	}
	hello.Control = ctl
	for range *ports {
		site, err := serve(h, *certFile != "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "sim:", err)
			return 1
		}
		hello.Sites = append(hello.Sites, site)
	}
	if err := json.NewEncoder(os.Stdout).Encode(hello); err != nil {
		return 1
	}
	waitForParent()
	for _, s := range servers {
		_ = s.Close()
	}
	return 0
}

// simProcess is a running simulator process, seen from the benchmark.
type simProcess struct {
	simHello
	*helperProc
	ctl *http.Client
}

// startSim starts a simulator process of kind erp with ports sites, over
// HTTPS when cert is not nil.
func startSim(ctx context.Context, erp string, ports, extraInvoices int, cert *certFiles) (*simProcess, error) {
	p := &simProcess{ctl: &http.Client{Timeout: 30 * time.Second}}
	args := []string{"sim", "-erp=" + erp, fmt.Sprintf("-ports=%d", ports), fmt.Sprintf("-extra-invoices=%d", extraInvoices)}
	if cert != nil {
		args = append(args, "-tls-cert="+cert.cert, "-tls-key="+cert.key)
	}
	h, err := startHelper(ctx, &p.simHello, args...)
	if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	p.helperProc = h
	return p, nil
}

func (p *simProcess) post(path string) error {
	resp, err := p.ctl.Post(p.Control+path, "text/plain", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("simulator %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// registerClient registers an OAuth application whose redirect URI is
// redirectURI.
func (p *simProcess) registerClient(redirectURI string) (oauthClient, error) {
	resp, err := p.ctl.Post(p.Control+"/oauth-client?redirect_uri="+url.QueryEscape(redirectURI), "text/plain", nil)
	if err != nil {
		return oauthClient{}, err
	}
	defer resp.Body.Close()
	var c oauthClient
	if resp.StatusCode != http.StatusOK {
		return c, errors.New("simulator /oauth-client: " + resp.Status)
	}
	return c, json.NewDecoder(resp.Body).Decode(&c)
}

func (p *simProcess) get(path string, out any) error {
	resp, err := p.ctl.Get(p.Control + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New("simulator " + path + ": " + resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (p *simProcess) setLatency(d time.Duration) error {
	return p.post("/latency?d=" + d.String())
}

// replaying turns the replay mode on or off (off forgets the answers).
func (p *simProcess) replaying(on bool) error {
	if on {
		return p.post("/replay?on=1")
	}
	return p.post("/replay?on=0")
}

func (p *simProcess) stats(reset bool) (simStats, error) {
	var st simStats
	path := "/stats"
	if reset {
		path += "?reset=1"
	}
	return st, p.get(path, &st)
}

// capture records the upstream requests made while fn runs.
func (p *simProcess) capture(fn func() error) ([]capturedRequest, error) {
	if err := p.post("/capture"); err != nil {
		return nil, err
	}
	if err := fn(); err != nil {
		return nil, err
	}
	var out []capturedRequest
	return out, p.get("/captured", &out)
}

// newSimulator builds the Frappe simulator with extra invoices for large
// reports.
func newSimulator(extraInvoices int) *frappetest.Simulator {
	return frappetest.NewHandler(frappetest.Options{ExtraSalesInvoices: extraInvoices})
}
