package pgcluster

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// clusterDir returns a fresh directory for a cluster, searchable by the
// server user (t.TempDir's parent is 0700, which an unprivileged postgres
// cannot cross when the tests run as root).
func clusterDir(t *testing.T) string {
	t.Helper()
	parent, err := NewScratchDir("pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	return filepath.Join(parent, "cluster")
}

func startCluster(t *testing.T, opts Options) *Cluster {
	t.Helper()
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

func exec1(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}

func queryInt(t *testing.T, url, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), sql).Scan(&n); err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return n
}

func TestStartStopRestartKeepsDataPasswordAndPort(t *testing.T) {
	dir := clusterDir(t)
	first := startCluster(t, Options{Dir: dir})
	exec1(t, first.URL("postgres"), "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
	if err := first.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pgdata", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("postmaster.pid after Stop: %v", err)
	}

	second := startCluster(t, Options{Dir: dir})
	if second.URL("postgres") != first.URL("postgres") {
		t.Errorf("URL changed across restarts: %s then %s", first.URL("postgres"), second.URL("postgres"))
	}
	if got := queryInt(t, second.URL("postgres"), "SELECT n FROM kept"); got != 42 {
		t.Errorf("kept row = %d, want 42", got)
	}

	info, err := os.Stat(filepath.Join(dir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("password file mode = %04o, want 0600", perm)
	}
	if info, err := os.Stat(second.LogPath()); err != nil || info.Size() == 0 {
		t.Errorf("server log %s is missing or empty: %v", second.LogPath(), err)
	}
}

func TestServerListensOnlyOnLoopbackWithPassword(t *testing.T) {
	c := startCluster(t, Options{Dir: clusterDir(t)})
	conn, err := pgx.Connect(t.Context(), c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var listen, sockets, method string
	if err := conn.QueryRow(t.Context(), "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories'), current_setting('password_encryption')").
		Scan(&listen, &sockets, &method); err != nil {
		t.Fatal(err)
	}
	if listen != "127.0.0.1" || sockets != "" || method != "scram-sha-256" {
		t.Errorf("listen_addresses=%q unix_socket_directories=%q password_encryption=%q", listen, sockets, method)
	}

	wrong := "postgres://" + Superuser + ":wrong@127.0.0.1:" + strconv.Itoa(c.Port()) + "/postgres?sslmode=disable"
	if conn, err := pgx.Connect(t.Context(), wrong); err == nil {
		conn.Close(context.Background())
		t.Fatal("connected with a wrong password")
	}
}

func TestStartAdoptsRunningPostmaster(t *testing.T) {
	dir := clusterDir(t)
	first := startCluster(t, Options{Dir: dir})

	// A second Start on the same directory, as after a crash of the process
	// that started the first, finds the postmaster answering and reuses it.
	second := startCluster(t, Options{Dir: dir})
	if second.URL("postgres") != first.URL("postgres") {
		t.Fatalf("adopted URL %s, want %s", second.URL("postgres"), first.URL("postgres"))
	}
	if second.pm.pid != first.pm.pid {
		t.Fatalf("adopted pid %d, want %d", second.pm.pid, first.pm.pid)
	}
	if got := queryInt(t, second.URL("postgres"), "SELECT 1"); got != 1 {
		t.Fatalf("SELECT 1 = %d", got)
	}
	if err := second.Stop(t.Context()); err != nil {
		t.Fatalf("Stop adopted: %v", err)
	}
	if err := first.pm.wait(t.Context()); err != nil {
		t.Fatalf("original postmaster still running after the adopter stopped it: %v", err)
	}
}

func TestStartRemovesStalePidFile(t *testing.T) {
	dir := clusterDir(t)
	first := startCluster(t, Options{Dir: dir})
	port := first.Port()
	if err := first.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A crashed run leaves postmaster.pid naming a process that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := strconv.Itoa(dead.Process.Pid) + "\n" + filepath.Join(dir, "pgdata") + "\n0\n" + strconv.Itoa(port) + "\n\n127.0.0.1\n0 0\nready   \n"
	pidPath := filepath.Join(dir, "pgdata", "postmaster.pid")
	if err := os.WriteFile(pidPath, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}

	second := startCluster(t, Options{Dir: dir})
	if got := queryInt(t, second.URL("postgres"), "SELECT 1"); got != 1 {
		t.Fatalf("SELECT 1 = %d", got)
	}
	if second.pm.exited == nil {
		t.Fatal("Start adopted a dead postmaster instead of starting one")
	}
}

func TestStartFailsClearlyWhenFixedPortIsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	_, err = Start(t.Context(), Options{Dir: clusterDir(t), Port: port})
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("Start on a taken port: err = %v, want errPortTaken", err)
	}
	t.Logf("Start error: %v", err)
}

func TestRemoveDeletesDirectory(t *testing.T) {
	dir := clusterDir(t)
	c, err := Start(t.Context(), Options{Dir: dir, Settings: EphemeralSettings()})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, c.URL("postgres"), "SELECT current_setting('max_connections')::int"); got != 300 {
		t.Errorf("max_connections = %d, want the EphemeralSettings value 300", got)
	}
	if err := c.Remove(t.Context()); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory still exists after Remove: %v", err)
	}
}
