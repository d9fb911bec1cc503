package main

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestRunCommandReportsExitCodes(t *testing.T) {
	fwd := newForwarder(make(chan os.Signal))
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"success", []string{"sh", "-c", "exit 0"}, 0},
		{"failure code passes through", []string{"sh", "-c", "exit 3"}, 3},
		{"killed by a signal", []string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
		{"not runnable", []string{"/nonexistent/command"}, exitNotRunnable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runCommand(tt.args, os.Environ(), fwd); got != tt.want {
				t.Errorf("runCommand(%q) = %d, want %d", tt.args, got, tt.want)
			}
		})
	}
}

func TestForwarderPassesSignalsToTheCommand(t *testing.T) {
	signals := make(chan os.Signal, 1)
	fwd := newForwarder(signals)
	ready := filepath.Join(t.TempDir(), "ready")
	done := make(chan int, 1)
	go func() {
		// The child marks itself ready once its trap is installed.
		done <- runCommand([]string{"sh", "-c", `trap 'exit 7' TERM; touch "$0"; while :; do sleep 1; done`, ready},
			os.Environ(), fwd)
	}()
	for !fileExists(ready) || !fwd.running() {
		select {
		case code := <-done:
			t.Fatalf("child exited early with %d", code)
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	signals <- syscall.SIGTERM
	if code := <-done; code != 7 {
		t.Errorf("exit code after forwarded SIGTERM = %d, want 7 (the child's trap)", code)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestWithoutVar(t *testing.T) {
	env := []string{"A=1", "TEST_DATABASE_URL=x", "TEST_DATABASE_URL_OTHER=y", "B=2"}
	got := withoutVar(env, "TEST_DATABASE_URL")
	want := []string{"A=1", "TEST_DATABASE_URL_OTHER=y", "B=2"}
	if !slices.Equal(got, want) {
		t.Errorf("withoutVar = %q, want %q", got, want)
	}
}
