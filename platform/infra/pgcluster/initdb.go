package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"go.uber.org/zap"
)

// initdb creates the data directory. It initialises a scratch directory and
// renames it into place, so a run killed half-way through leaves no pgdata
// that a later Start would mistake for a cluster.
func (c *Cluster) initdb(ctx context.Context, bins binaries, user serverUser) error {
	scratch := c.dataDir + ".init"
	if err := os.RemoveAll(scratch); err != nil {
		return fmt.Errorf("pgcluster: clear %s: %w", scratch, err)
	}
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return fmt.Errorf("pgcluster: create %s: %w", scratch, err)
	}
	if err := user.chown(scratch); err != nil {
		return err
	}

	// initdb runs as the server user, which cannot read the 0600 password
	// file of root; it gets its own copy for the duration of the run.
	pwfile := filepath.Join(c.dir, "initdb.pwfile")
	if err := writePrivateFile(pwfile, c.password+"\n"); err != nil {
		return fmt.Errorf("pgcluster: write initdb password file: %w", err)
	}
	defer os.Remove(pwfile)
	if err := user.chown(pwfile); err != nil {
		return err
	}

	logPath := filepath.Join(c.dir, "initdb.log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: open initdb log: %w", err)
	}
	defer logFile.Close()

	cmd := exec.CommandContext(ctx, bins.initdb(),
		"--pgdata="+scratch,
		"--username="+Superuser,
		"--pwfile="+pwfile,
		"--auth=scram-sha-256",
		"--encoding=UTF8",
		// The C locale sorts by byte and needs no locale data installed.
		"--locale=C",
		// The cluster is flushed by its first checkpoint; syncing each of
		// initdb's ~1000 files costs seconds on slow disks.
		"--no-sync",
	)
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = user.sysProcAttr()
	started := time.Now()
	if err := cmd.Run(); err != nil {
		return errors.New(withLogTail(fmt.Sprintf("pgcluster: initdb %s: %v", scratch, err), logPath))
	}
	if err := os.Rename(scratch, c.dataDir); err != nil {
		return fmt.Errorf("pgcluster: move initialised cluster into place: %w", err)
	}
	c.logger.Info("postgres: initdb done", zap.Duration("took", time.Since(started)), zap.Int("major", bins.major))
	return nil
}

// serverEnv is the environment of initdb and postgres: PATH only, plus a
// fixed locale and time zone, so the caller's PG* variables and locale cannot
// change how the cluster behaves. initdb records TZ as the cluster's time zone.
func serverEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"LC_ALL=C",
		"TZ=UTC",
	}
}
