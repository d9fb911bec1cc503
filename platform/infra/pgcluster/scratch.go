package pgcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownerFile, inside a scratch directory, names the process that made it.
const ownerFile = "owner.pid"

// NewScratchDir creates a temporary directory to hold a throwaway cluster
// (pass filepath.Join(dir, "cluster") as Options.Dir) and returns its path;
// the caller removes it when done. The directory is searchable by the server
// user, unlike os.MkdirTemp's 0700, and lies under $TMPDIR, or /tmp when
// the server user cannot reach $TMPDIR.
//
// A process killed before its cleanup (`go test -timeout`, SIGKILL) cannot
// remove its directory; its server stops with it (see Start). So each call
// first deletes scratch directories with the same prefix whose owner process
// has exited and whose server is gone.
func NewScratchDir(prefix string) (string, error) {
	parent := scratchParent()
	sweepScratchDirs(parent, prefix)
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", fmt.Errorf("pgcluster: create scratch directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("pgcluster: make scratch directory searchable: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("pgcluster: record scratch directory owner: %w", err)
	}
	return dir, nil
}

// scratchParent returns the temporary directory to use: $TMPDIR, unless the
// server user cannot reach it (a TMPDIR under /root, say), then /tmp.
func scratchParent() string {
	user, err := chooseServerUser()
	if err != nil {
		return os.TempDir()
	}
	for _, dir := range []string{os.TempDir(), "/tmp"} {
		if user.checkReachable(dir) == nil {
			return dir
		}
	}
	return os.TempDir()
}

// sweepScratchDirs removes abandoned scratch directories. It is best-effort:
// a directory it cannot judge is left alone.
func sweepScratchDirs(parent, prefix string) {
	matches, err := filepath.Glob(filepath.Join(parent, prefix+"*"))
	if err != nil {
		return
	}
	for _, dir := range matches {
		if abandoned(dir) {
			_ = os.RemoveAll(dir)
		}
	}
}

// abandoned reports whether dir's owner has exited and no postmaster still
// runs inside it.
func abandoned(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return false
	}
	owner, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || processAlive(owner) {
		return false
	}
	pidFiles, err := filepath.Glob(filepath.Join(dir, "*", "pgdata", "postmaster.pid"))
	if err != nil {
		return false
	}
	for _, pidFile := range pidFiles {
		pm, ok, err := readPostmasterPID(pidFile)
		if err != nil || (ok && processAlive(pm.pid)) {
			return false
		}
	}
	return true
}
