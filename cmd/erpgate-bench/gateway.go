package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/erpgate/erpgate/platform/infra/freeport"
)

// binaries are the gateway builds the benchmark runs: the production binary
// (cold start) and the same code with the opt-in pprof listener
// (cmd/erpgate/pprof.go), used wherever goroutines are counted or a profile
// is taken.
type binaries struct {
	plain, pprof string
}

// buildGateway builds both binaries into dir from the module at root.
func buildGateway(ctx context.Context, root, dir string) (binaries, error) {
	b := binaries{plain: filepath.Join(dir, "erpgate"), pprof: filepath.Join(dir, "erpgate-pprof")}
	for _, build := range []struct{ out, tags string }{{b.plain, ""}, {b.pprof, "erpgate_pprof"}} {
		args := []string{"build", "-o", build.out}
		if build.tags != "" {
			args = append(args, "-tags", build.tags)
		}
		cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/erpgate")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", build.out, err, out)
		}
	}
	return b, nil
}

// moduleRoot is the directory of the erpgate go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the benchmark inside the erpgate module")
	}
	return filepath.Dir(mod), nil
}

// gatewayEnv is the configuration every benchmark replica shares.
type gatewayEnv struct {
	dbURL, adminToken, keys string
	extra                   map[string]string
}

// gatewayProc is one running erpgate process.
type gatewayProc struct {
	cmd      *exec.Cmd
	URL      string
	pprofURL string
	logPath  string
	// Ready is how long the process took from exec to a green /readyz.
	Ready time.Duration
	done  chan struct{}
}

func (g *gatewayProc) PID() int { return g.cmd.Process.Pid }

// startGatewayProc starts bin serving on a free loopback port and waits
// until /readyz is green, polling every millisecond.
func startGatewayProc(ctx context.Context, bin string, env gatewayEnv, logPath string) (*gatewayProc, error) {
	addr, err := freeport.Addr()
	if err != nil {
		return nil, err
	}
	g := &gatewayProc{URL: "http://" + addr, logPath: logPath, done: make(chan struct{})}
	vars := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"ERPGATE_LISTEN_ADDR=" + addr,
		"ERPGATE_PUBLIC_BASE_URL=http://" + addr,
		"DATABASE_URL=" + env.dbURL,
		"ERPGATE_ADMIN_TOKEN=" + env.adminToken,
		"ERPGATE_ENCRYPTION_KEYS=" + env.keys,
	}
	if strings.HasSuffix(bin, "-pprof") {
		paddr, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		g.pprofURL = "http://" + paddr
		vars = append(vars, "ERPGATE_PPROF_ADDR="+paddr)
	}
	for k, v := range env.extra {
		vars = append(vars, k+"="+v)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	g.cmd = exec.Command(bin, "serve")
	g.cmd.Env = vars
	g.cmd.Stdout, g.cmd.Stderr = logFile, logFile
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	probe := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	for {
		resp, err := probe.Get(g.URL + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				g.Ready = time.Since(start)
				return g, nil
			}
		}
		select {
		case <-g.done:
			return nil, fmt.Errorf("erpgate exited before it was ready; log %s:\n%s", logPath, tail(logPath))
		case <-ctx.Done():
			g.stop()
			return nil, fmt.Errorf("erpgate was not ready: %w; log %s:\n%s", ctx.Err(), logPath, tail(logPath))
		case <-time.After(time.Millisecond):
		}
	}
}

// stop sends SIGTERM (a graceful shutdown) and waits for the exit.
func (g *gatewayProc) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(40 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// goroutines reads the goroutine count from the pprof listener.
func (g *gatewayProc) goroutines() int {
	if g.pprofURL == "" {
		return 0
	}
	resp, err := http.Get(g.pprofURL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total")))
	_, _ = io.Copy(io.Discard, resp.Body)
	return n
}

// profile saves a CPU profile of d to path (for go tool pprof).
func (g *gatewayProc) profile(ctx context.Context, d time.Duration, path string) error {
	if g.pprofURL == "" {
		return errors.New("no pprof listener")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", g.pprofURL, int(d.Seconds())), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// snapshot saves a pprof profile (heap, goroutine, allocs) of the process.
func (g *gatewayProc) snapshot(ctx context.Context, profile, query, path string) error {
	if g.pprofURL == "" {
		return errors.New("no pprof listener")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.pprofURL+"/debug/pprof/"+profile+query, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

func tail(path string) string {
	raw, _ := os.ReadFile(path)
	if len(raw) > 4000 {
		raw = raw[len(raw)-4000:]
	}
	return string(raw)
}

// adminAPI registers the benchmark's sites through a gateway's admin API,
// as an operator's script would.
type adminAPI struct {
	base, token string
	client      *http.Client
}

func (a *adminAPI) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// benchSite is a registered site and its service tokens.
type benchSite struct {
	ID, Slug, BaseURL string
	Tokens            []string
}

// registerSites registers one site per port of simulator sim, with the
// simulator's bot credential and tokensPerSite service tokens each, eight
// requests at a time.
func registerSites(ctx context.Context, api *adminAPI, prefix string, sim *simProcess, tokensPerSite int) ([]benchSite, error) {
	baseURLs := sim.Sites
	sites := make([]benchSite, len(baseURLs))
	jobs := make(chan int)
	errs := make(chan error, len(baseURLs))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := registerSite(ctx, api, &sites[i], fmt.Sprintf("%s-%03d", prefix, i+1), baseURLs[i], sim, tokensPerSite); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range baseURLs {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return sites, <-errs
}

func registerSite(ctx context.Context, api *adminAPI, s *benchSite, slug, baseURL string, sim *simProcess, tokens int) error {
	var site struct {
		ID string `json:"id"`
	}
	req := map[string]any{"slug": slug, "kind": sim.Kind, "display_name": "Bench " + slug, "base_url": baseURL}
	if sim.Settings != nil {
		req["settings"] = sim.Settings
	}
	if err := api.do(ctx, http.MethodPost, "/sites", req, &site); err != nil {
		return err
	}
	if err := api.do(ctx, http.MethodPut, "/sites/"+site.ID+"/connections/api_token", map[string]any{
		"credentials": sim.Credentials,
	}, nil); err != nil {
		return err
	}
	*s = benchSite{ID: site.ID, Slug: slug, BaseURL: baseURL}
	for i := range tokens {
		var tok struct {
			Token string `json:"token"`
		}
		if err := api.do(ctx, http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": fmt.Sprintf("bench %d", i+1)}, &tok); err != nil {
			return err
		}
		s.Tokens = append(s.Tokens, tok.Token)
	}
	return nil
}
