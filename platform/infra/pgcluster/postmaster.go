package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// adoptTimeout bounds how long Start waits for a postmaster left by an
// earlier run to answer before giving up on it.
const adoptTimeout = 15 * time.Second

// failedStartStopTimeout bounds the cleanup after a failed start.
const failedStartStopTimeout = 30 * time.Second

// errPortTaken means postgres could not bind the chosen port because another
// process holds it.
var errPortTaken = errors.New("port already in use")

// startPostmaster launches postgres on port and waits until it accepts
// connections.
func (c *Cluster) startPostmaster(ctx context.Context, bins binaries, user serverUser, port int, settings map[string]string) error {
	logFile, err := os.OpenFile(c.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: open server log: %w", err)
	}
	args := []string{"-D", c.dataDir, "-p", strconv.Itoa(port)}
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		args = append(args, "-c", name+"="+settings[name])
	}
	// Last, so that Settings cannot override them.
	args = append(args,
		"-c", "listen_addresses="+loopbackHost,
		// No Unix socket: nothing to clean up, no permission questions,
		// and TCP with a password is the only way in.
		"-c", "unix_socket_directories=",
	)
	// Not CommandContext: the server outlives Start's context.
	cmd := exec.Command(bins.postgres(), args...)
	cmd.Dir = c.dataDir
	cmd.Env = serverEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = user.sysProcAttr()

	pm, err := spawnPostmaster(cmd)
	if err != nil {
		logFile.Close()
		return err
	}
	c.pm, c.port, c.logFile = pm, port, logFile

	err = waitReady(ctx, c.URL("postgres"), pm)
	if err == nil {
		return nil
	}
	c.stopForFailedStart()
	if errors.Is(err, errPostmasterExited) {
		if !portIsFree(port) {
			return fmt.Errorf("pgcluster: postgres cannot listen on %s:%d: %w", loopbackHost, port, errPortTaken)
		}
		return errors.New(withLogTail(fmt.Sprintf("pgcluster: postgres exited during start (%v)", pm.waitErr), c.logPath))
	}
	return errors.New(withLogTail(err.Error(), c.logPath))
}

// stopForFailedStart stops a postmaster that Start will not hand out.
func (c *Cluster) stopForFailedStart() {
	ctx, cancel := context.WithTimeout(context.Background(), failedStartStopTimeout)
	defer cancel()
	if err := c.pm.stop(ctx); err != nil {
		c.logger.Warn("postgres: stop after failed start", zap.Error(err))
	}
	if c.logFile != nil {
		c.logFile.Close()
		c.logFile = nil
	}
}

// adoptRunning looks at the pid file an earlier run left. If its postmaster
// still runs and answers with our password, the cluster adopts it. If it is
// gone, or the PID now belongs to another user's process, the stale pid file
// is removed so postgres can start.
func (c *Cluster) adoptRunning(ctx context.Context, user serverUser) (bool, error) {
	pidPath := filepath.Join(c.dataDir, "postmaster.pid")
	pid, ok, err := readPostmasterPID(pidPath)
	if err != nil || !ok {
		return false, err
	}
	if processOwnedBy(pid.pid, user.uid) && pid.port > 0 {
		c.port = pid.port
		pm := adoptPostmaster(pid.pid)
		waitCtx, cancel := context.WithTimeout(ctx, adoptTimeout)
		err := waitReady(waitCtx, c.URL("postgres"), pm)
		cancel()
		if err == nil {
			c.pm = pm
			return true, nil
		}
		if !errors.Is(err, errPostmasterExited) {
			return false, fmt.Errorf("pgcluster: postmaster %d from an earlier run still runs on %s but does not answer: %w; stop it or remove %s",
				pid.pid, c.dataDir, err, pidPath)
		}
		// It exited while we waited (it was shutting down): start afresh.
	}
	c.logger.Info("postgres: removing stale pid file", zap.Int("pid", pid.pid))
	if err := os.Remove(pidPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("pgcluster: remove stale %s: %w", pidPath, err)
	}
	return false, nil
}
