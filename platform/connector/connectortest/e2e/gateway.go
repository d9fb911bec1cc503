// Package e2e is the end-to-end kit: it builds the real erpgate binary with
// -tags dev, runs `erpgate dev` (the gateway, every registered connector's
// simulator and demo site) in a scratch folder on a fresh database, and
// talks to it the way clients do: the official MCP Go SDK over the service
// door, and the admin API. A connector's end-to-end test lives beside the
// connector:
//
//	gw := e2e.Start(t, e2e.Options{})
//	site := gw.Site(t, "frappe")
//	res := site.CallService(t, "list_customers", map[string]any{"limit": 5})
//
// Each Start is one process (a few seconds on a busy machine), so a package
// starts one gateway and shares it across subtests. The binary is built
// once per test binary and set of tags.
//
// The database: a fresh one on the server TEST_DATABASE_URL names (as
// `go run ./cmd/pgrun -- go test` and CI set it), or else dev's own
// private cluster in the scratch folder, as `erpgate dev` runs for a person.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector/devstate"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// erpgatePackage is the command the kit builds and runs.
const erpgatePackage = "github.com/erpgate/erpgate/cmd/erpgate"

const (
	// startTimeout bounds `erpgate dev` from start to its summary
	// (migrations, a private cluster's initdb, every demo site).
	startTimeout = 3 * time.Minute
	// stopTimeout bounds its exit after an interrupt.
	stopTimeout = time.Minute
	// summaryEnd is the last line of the summary dev prints once every
	// demo site is registered and .data/dev.json is written.
	summaryEnd = "Press Ctrl-C to stop."
	// anyPorts asks dev to put every simulator on a port the system picks
	// (dev.json says where), so that dev processes run side by side.
	anyPorts = "ERPGATE_DEV_ANY_PORTS"
)

// Options configures Start.
type Options struct {
	// Tags are build tags besides dev, e.g. "erpgate_example" for the
	// example connector.
	Tags []string
	// Env holds extra environment variables for the gateway, e.g.
	// ERPGATE_ settings (docs: README, configs/erpgate.example.yaml).
	Env map[string]string
}

// Gateway is one running `erpgate dev`.
type Gateway struct {
	// BaseURL is the gateway's public base URL, AdminToken the bearer
	// token of its admin API (/api/v1), DatabaseURL its database.
	BaseURL, AdminToken, DatabaseURL string
	// State is .data/dev.json as dev wrote it.
	State devstate.State
	// Dir is the folder dev runs in (its .data/ is there).
	Dir string

	logs *syncBuffer
	cmd  *exec.Cmd

	mu       sync.Mutex
	sessions []*Session
}

// Start builds erpgate with -tags dev (and opts.Tags), runs `erpgate dev`
// and waits until every demo site is registered. The gateway stops, and its
// database is dropped, when t ends; its output is logged if t failed.
func Start(t *testing.T, opts Options) *Gateway {
	t.Helper()
	bin := binary(t, opts.Tags)
	dir, err := pgcluster.NewScratchDir("erpgate-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	env := map[string]string{
		"ERPGATE_LISTEN_ADDR": freeport.Loopback(t),
		anyPorts:              "1",
	}
	// Without it, dev starts its private cluster on a free port.
	if dbURL, ok := pgtest.NewSharedDatabase(t); ok {
		env["DATABASE_URL"] = dbURL
	}
	for k, v := range opts.Env {
		env[k] = v
	}

	cmd := exec.Command(bin, "dev")
	cmd.Dir = dir
	cmd.Env = environ(env)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	g := &Gateway{Dir: dir, logs: logs, cmd: cmd}
	t.Cleanup(func() {
		g.stop(t, exited)
		if t.Failed() {
			t.Logf("erpgate dev output:\n%s", logs.String())
		}
	})

	deadline := time.After(startTimeout)
	for !strings.Contains(logs.String(), summaryEnd) {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("erpgate dev stopped before it was ready: %v", err)
		case <-deadline:
			t.Fatalf("erpgate dev was not ready within %s", startTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, ".data", "dev.json"))
	if err != nil {
		t.Fatalf("read dev.json: %v", err)
	}
	if err := json.Unmarshal(raw, &g.State); err != nil {
		t.Fatalf("dev.json: %v", err)
	}
	g.BaseURL, g.AdminToken, g.DatabaseURL = g.State.BaseURL, g.State.AdminToken, g.State.DatabaseURL
	if url, ok := env["DATABASE_URL"]; ok {
		g.DatabaseURL = url // dev.json shows a given URL without its password
	}
	return g
}

// Logs returns what the gateway printed so far (its JSON log lines and the
// dev summary).
func (g *Gateway) Logs() string { return g.logs.String() }

// Site returns the demo site of kind, failing the test if dev registered
// none.
func (g *Gateway) Site(t testing.TB, kind string) *Site {
	t.Helper()
	var kinds []string
	for i := range g.State.Sites {
		if g.State.Sites[i].Kind == kind {
			return &Site{Site: g.State.Sites[i], gw: g}
		}
		kinds = append(kinds, g.State.Sites[i].Kind)
	}
	t.Fatalf("erpgate dev registered no %s demo site (it has %v)", kind, kinds)
	return nil
}

// Sites returns every demo site dev registered, in dev.json's order.
func (g *Gateway) Sites() []*Site {
	sites := make([]*Site, len(g.State.Sites))
	for i := range g.State.Sites {
		sites[i] = &Site{Site: g.State.Sites[i], gw: g}
	}
	return sites
}

// stop interrupts dev, as Ctrl-C does, and waits for it.
func (g *Gateway) stop(t *testing.T, exited chan error) {
	g.mu.Lock()
	sessions := g.sessions
	g.sessions = nil
	g.mu.Unlock()
	for _, s := range sessions {
		_ = s.cs.Close()
	}
	if err := g.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("interrupt erpgate dev: %v", err)
	}
	select {
	case err := <-exited:
		if err != nil && !t.Failed() {
			t.Errorf("erpgate dev exited with %v after an interrupt, want status 0", err)
		}
	case <-time.After(stopTimeout):
		_ = g.cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		t.Errorf("erpgate dev did not stop within %s of an interrupt", stopTimeout)
	}
}

// environ is this process's environment without its DATABASE_URL and
// ERPGATE_ settings, plus env.
func environ(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "ERPGATE_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// builds holds the binary of each set of tags while a test uses it; the
// last user's cleanup removes it.
var (
	buildsMu sync.Mutex
	builds   = map[string]*build{}
)

type build struct {
	once  sync.Once
	dir   string
	bin   string
	err   error
	users int
}

// binary builds erpgate with -tags dev,tags once while tests use it.
func binary(t testing.TB, tags []string) string {
	t.Helper()
	all := append([]string{"dev"}, tags...)
	slices.Sort(all)
	all = slices.Compact(all)
	key := strings.Join(all, ",")
	buildsMu.Lock()
	b := builds[key]
	if b == nil {
		b = &build{}
		builds[key] = b
	}
	b.users++
	buildsMu.Unlock()
	t.Cleanup(func() {
		buildsMu.Lock()
		defer buildsMu.Unlock()
		if b.users--; b.users == 0 {
			delete(builds, key)
			if b.dir != "" {
				_ = os.RemoveAll(b.dir)
			}
		}
	})
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "erpgate-e2e-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "erpgate")
		var out bytes.Buffer
		cmd := exec.Command("go", "build", "-tags", key, "-o", b.bin, erpgatePackage)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.err = fmt.Errorf("go build -tags %s %s: %w\n%s", key, erpgatePackage, err, out.String())
		}
		consultSources()
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// consultSources looks at every file of the module (its size and time),
// once per test binary. The go command caches a test's result until a file
// the test consulted changes; the binary the kit builds comes from the
// whole module, so without this a cached pass of a connector's test would
// outlive a change to the engine.
var consultSources = sync.OnceFunc(func() {
	dir, err := os.Getwd()
	if err != nil {
		return
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return
		}
		dir = parent
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && path != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			_, _ = os.Stat(path)
		}
		return nil
	})
})

// syncBuffer is a bytes.Buffer written by the process and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// callContext bounds one call of the kit.
func callContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 90*time.Second)
}
