package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// stopPollInterval is how often Stop checks whether a postmaster that is not
// our child (one adopted from a previous run) has exited.
const stopPollInterval = 20 * time.Millisecond

// killGrace is how long Stop waits after an immediate shutdown before it
// kills the postmaster outright.
const killGrace = 10 * time.Second

// postmaster is a running server process: either our child (exited is
// closed when it ends) or one adopted from a previous run (exited is nil).
type postmaster struct {
	pid     int
	exited  chan struct{}
	waitErr error // valid once exited is closed
}

// spawnPostmaster starts cmd and waits for it in the background.
//
// The child gets SIGINT (fast shutdown) when its parent dies, so a test
// binary killed by `go test -timeout` does not leave a server behind. Linux
// delivers that signal when the forking thread exits rather than the process
// (go.dev/issue/27505), so the fork happens on a goroutine pinned to its own
// thread for the child's whole life.
func spawnPostmaster(cmd *exec.Cmd) (*postmaster, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT

	pm := &postmaster{exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread ends with this goroutine, which
		// returns only after the child has exited.
		if err := cmd.Start(); err != nil {
			started <- err
			close(pm.exited)
			return
		}
		pm.pid = cmd.Process.Pid
		started <- nil
		pm.waitErr = cmd.Wait()
		close(pm.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	return pm, nil
}

// adoptPostmaster wraps a server left running by an earlier process.
func adoptPostmaster(pid int) *postmaster {
	return &postmaster{pid: pid}
}

// hasExited reports, without blocking, whether a child postmaster has ended.
func (pm *postmaster) hasExited() bool {
	if pm.exited == nil {
		return !processAlive(pm.pid)
	}
	select {
	case <-pm.exited:
		return true
	default:
		return false
	}
}

// stop asks for a fast shutdown (SIGINT: roll back open transactions,
// disconnect clients, checkpoint) and waits for the process to end. When ctx
// ends first it escalates to an immediate shutdown and then SIGKILL.
func (pm *postmaster) stop(ctx context.Context) error {
	if pm.hasExited() {
		return nil
	}
	if err := syscall.Kill(pm.pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("pgcluster: signal postmaster %d: %w", pm.pid, err)
	}
	if err := pm.wait(ctx); err == nil {
		return nil
	}
	_ = syscall.Kill(pm.pid, syscall.SIGQUIT)
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killGrace)
	defer cancel()
	if err := pm.wait(graceCtx); err != nil {
		_ = syscall.Kill(pm.pid, syscall.SIGKILL)
	}
	return fmt.Errorf("pgcluster: fast shutdown of postmaster %d did not finish: %w", pm.pid, ctx.Err())
}

// wait blocks until the process has exited or ctx is done.
func (pm *postmaster) wait(ctx context.Context) error {
	if pm.exited != nil {
		select {
		case <-pm.exited:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ticker := time.NewTicker(stopPollInterval)
	defer ticker.Stop()
	for processAlive(pm.pid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
	return nil
}
