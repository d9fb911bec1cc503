package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitSaysDirty: the results name the commit, and mark a build with
// changes or new files not committed, which the commit alone would hide.
func TestCommitSaysDirty(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("a.go", "package a\n")
	git("add", ".")
	git("commit", "-q", "-m", "a")
	head := git("rev-parse", "--short", "HEAD")

	if got := describeMachine(context.Background(), root).Commit; got != head {
		t.Fatalf("clean tree: commit %q, want %q", got, head)
	}
	write("b.go", "package a\n") // a new file, not yet added
	if got := describeMachine(context.Background(), root).Commit; got != head+"-dirty" {
		t.Fatalf("untracked file: commit %q, want %q", got, head+"-dirty")
	}
	if err := os.Remove(filepath.Join(root, "b.go")); err != nil {
		t.Fatal(err)
	}
	write("a.go", "package a // changed\n")
	if got := describeMachine(context.Background(), root).Commit; got != head+"-dirty" {
		t.Fatalf("changed file: commit %q, want %q", got, head+"-dirty")
	}
}
