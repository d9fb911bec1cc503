package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// postmasterPID is what a running (or crashed) server left in
// <pgdata>/postmaster.pid. See PostgreSQL's src/include/utils/pidfile.h for
// the line layout.
type postmasterPID struct {
	pid  int
	port int
}

// readPostmasterPID parses the pid file; ok is false when there is none.
func readPostmasterPID(path string) (pm postmasterPID, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return postmasterPID{}, false, nil
	}
	if err != nil {
		return postmasterPID{}, false, fmt.Errorf("pgcluster: read %s: %w", path, err)
	}
	lines := strings.Split(string(raw), "\n")
	// Line 1 is the PID, line 4 the port.
	if len(lines) < 4 {
		// A server that died while writing the file.
		return postmasterPID{}, true, nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return postmasterPID{}, true, nil
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		port = 0
	}
	return postmasterPID{pid: pid, port: port}, true, nil
}

// processOwnedBy reports whether pid is alive and belongs to uid. PostgreSQL
// treats a pid file whose process it may not signal as stale, so a live
// process of another user (a recycled PID) is not a postmaster of ours.
func processOwnedBy(pid int, uid uint32) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	info, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		return false
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uid
}

// processAlive reports whether pid still exists (zombies excluded, since an
// orphaned postmaster is reaped by init).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
