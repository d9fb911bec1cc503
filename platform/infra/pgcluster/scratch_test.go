package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestNewScratchDirSweepsAbandonedDirectories(t *testing.T) {
	prefix := fmt.Sprintf("pgcluster-sweep-test-%d-", os.Getpid())
	t.Cleanup(func() { sweepAll(prefix) })

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parent := scratchParent()
	abandonedDir := filepath.Join(parent, prefix+"abandoned")
	liveDir := filepath.Join(parent, prefix+"live")
	for dir, owner := range map[string]int{abandonedDir: dead.Process.Pid, liveDir: os.Getpid()} {
		if err := os.MkdirAll(filepath.Join(dir, "cluster", "pgdata"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	dir, err := NewScratchDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("scratch directory %s: %v, mode %v; want 0755", dir, err, info.Mode().Perm())
	}
	if _, err := os.Stat(abandonedDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory of a dead owner was not swept: %v", err)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("directory of a live owner was swept: %v", err)
	}
}

func sweepAll(prefix string) {
	matches, _ := filepath.Glob(filepath.Join(scratchParent(), prefix+"*"))
	for _, m := range matches {
		os.RemoveAll(m)
	}
}

// helperEnv makes the test binary act as a process that starts a cluster
// and then hangs, for TestServerStopsWhenParentIsKilled.
const helperEnv = "PGCLUSTER_TEST_HELPER_DIR"

func TestServerStopsWhenParentIsKilled(t *testing.T) {
	if dir := os.Getenv(helperEnv); dir != "" {
		runHelper(dir)
		return
	}
	dir := clusterDir(t)
	helper := exec.Command(os.Args[0], "-test.run=^TestServerStopsWhenParentIsKilled$")
	helper.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		helper.Process.Kill()
		helper.Wait()
		t.Fatalf("read the helper's postmaster pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "postmaster "))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}

	// SIGKILL: no deferred cleanup runs in the helper.
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()

	if err := adoptPostmaster(pid).wait(t.Context()); err != nil {
		t.Fatalf("postmaster %d outlived its killed parent: %v", pid, err)
	}
	// The next Start on the directory finds no server and starts its own.
	c := startCluster(t, Options{Dir: dir})
	if c.pm.exited == nil {
		t.Error("Start adopted a postmaster that should have stopped")
	}
}

func runHelper(dir string) {
	c, err := Start(context.Background(), Options{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	fmt.Printf("postmaster %d\n", c.pm.pid)
	// Parked until the test kills this process.
	time.Sleep(time.Hour)
}
