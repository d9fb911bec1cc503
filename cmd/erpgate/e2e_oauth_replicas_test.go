package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// replica is an erpgate process.
type replica struct {
	URL    string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

// stop shuts the replica down gracefully (as on SIGINT) and waits for it
// to exit; it is killed if it takes more than 30 s.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Errorf("replica %s did not stop within 30 s of an interrupt", r.URL)
	}
}

// buildErpgate builds the binary into a directory removed with the test.
func buildErpgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "erpgate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	return bin
}

// startReplica runs `erpgate serve` with env and waits until it is ready.
func startReplica(t *testing.T, bin, addr string, env map[string]string) *replica {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "ERPGATE_LISTEN_ADDR="+addr)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{URL: "http://" + addr, cmd: cmd, logs: logs, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			t.Logf("replica %s logs:\n%s", addr, logs.String())
		}
	})
	for i := 0; i < 300; i++ {
		resp, err := http.Get(r.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("replica %s did not become ready:\n%s", addr, logs.String())
	return nil
}

// replicaEnv is the environment of erpgate processes that share the
// database at dbURL and are all reached at publicAddr (as behind a load
// balancer), with extra settings on top; it also returns the admin token.
func replicaEnv(t *testing.T, publicAddr, dbURL string, extra map[string]string) (map[string]string, string) {
	t.Helper()
	admin, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ERPGATE_PUBLIC_BASE_URL": "http://" + publicAddr,
		"DATABASE_URL":            dbURL,
		"ERPGATE_ADMIN_TOKEN":     admin.Value.Reveal(),
		"ERPGATE_ENCRYPTION_KEYS": keys,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env, admin.Value.Reveal()
}

// TestOAuthTwoReplicasRefreshOnce runs two erpgate processes on one
// Postgres. Fifty concurrent tool calls from one user whose ERP token has
// expired, split across both, make exactly one upstream refresh: the row
// lock holds across processes, singleflight within each.
func TestOAuthTwoReplicasRefreshOnce(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	a, b, gw := twoReplicas(t, map[string]string{
		"ERPGATE_LOG_LEVEL":              "warn",
		"ERPGATE_LIMIT_USER_CONCURRENCY": "100",
		"ERPGATE_LIMIT_USER_PER_MINUTE":  "1000",
		"ERPGATE_LIMIT_SITE_CONCURRENCY": "100",
		"ERPGATE_LIMIT_SITE_PER_MINUTE":  "1000",
	})
	site := frappeOAuthSite(t, gw, "acme", sim)
	user := userWithRole(t, sim, "all-companies")
	client := connectOAuth(t, site.MCPURL, frappeLogin(user))
	token := client.source.current().AccessToken

	sim.ExpireTokens()
	expireUpstreamTokens(t, gw.DBURL)
	before := sim.RefreshCount()

	const calls = 50
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		endpoint := a.URL + "/sites/acme/mcp"
		if i%2 == 1 {
			endpoint = b.URL + "/sites/acme/mcp"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- callAsUser(endpoint, token, user.Email, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := sim.RefreshCount() - before; got != 1 {
		t.Errorf("%d upstream refreshes for %d concurrent calls on two replicas, want exactly 1", got, calls)
	}
}

// twoReplicas starts two erpgate processes with the settings extra on one
// new database, both reached at the first one's address (as behind a load
// balancer: tokens are bound to the public URL, not to a replica), and
// returns them with a gateway whose admin API is the first one's.
func twoReplicas(t *testing.T, extra map[string]string) (a, b *replica, gw *gateway) {
	t.Helper()
	bin := buildErpgate(t)
	addrA, addrB := freeport.Loopback(t), freeport.Loopback(t)
	env, adminToken := replicaEnv(t, addrA, pgtest.NewDatabase(t), extra)
	a = startReplica(t, bin, addrA, env)
	b = startReplica(t, bin, addrB, env)
	return a, b, &gateway{URL: a.URL, DBURL: env["DATABASE_URL"], admin: &adminClient{base: a.URL, token: adminToken}}
}

// callAsUser makes one stateless tools/call of get_current_user and checks
// it ran as user.
func callAsUser(endpoint, token, user string, id int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_current_user","arguments":{}}}`, id+1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("call %d to %s: HTTP %d: %s", id, endpoint, resp.StatusCode, raw)
	}
	msg := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data:") {
				msg = []byte(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
			}
		}
	}
	var rpc struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &rpc); err != nil {
		return fmt.Errorf("call %d: %v: %s", id, err, raw)
	}
	if rpc.Result.IsError || rpc.Result.StructuredContent["user"] != user {
		return fmt.Errorf("call %d to %s: %s", id, endpoint, msg)
	}
	return nil
}
