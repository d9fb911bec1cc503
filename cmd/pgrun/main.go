// Command pgrun runs a command against a throwaway PostgreSQL server:
//
//	go run ./cmd/pgrun -- go test ./...
//
// It starts a private cluster (platform/infra/pgcluster) in a temporary directory,
// runs the command with TEST_DATABASE_URL set to the server's admin URL,
// forwards SIGINT and SIGTERM to it, then stops and deletes the cluster and
// exits with the command's exit code. When TEST_DATABASE_URL is already set,
// it runs the command against that server and starts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgcluster"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

const (
	startTimeout = 3 * time.Minute
	stopTimeout  = time.Minute
	// exitUsage and exitSetup are pgrun's own failures, distinct from the
	// command's codes where possible.
	exitUsage = 2
	exitSetup = 125
)

func main() {
	os.Exit(run())
}

func run() int {
	keep := flag.Bool("keep", false, "keep the cluster's directory (data and server log) instead of deleting it")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: pgrun [-keep] -- command [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		flag.Usage()
		return exitUsage
	}

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	fwd := newForwarder(signals)

	if os.Getenv(pgtest.EnvDatabaseURL) != "" {
		return runCommand(args, os.Environ(), fwd)
	}

	scratch, err := pgcluster.NewScratchDir("erpgate-pgrun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		return exitSetup
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	fwd.setCancel(cancel)
	started := time.Now()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{
		Dir:      filepath.Join(scratch, "cluster"),
		Settings: pgcluster.EphemeralSettings(),
	})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
		os.RemoveAll(scratch)
		return exitSetup
	}
	fmt.Fprintf(os.Stderr, "pgrun: PostgreSQL on 127.0.0.1:%d ready in %v\n",
		cluster.Port(), time.Since(started).Round(time.Millisecond))

	env := append(withoutVar(os.Environ(), pgtest.EnvDatabaseURL), pgtest.EnvDatabaseURL+"="+cluster.URL("postgres"))
	code := runCommand(args, env, fwd)

	stopCtx, cancelStop := context.WithTimeout(context.Background(), stopTimeout)
	defer cancelStop()
	if *keep {
		if err := cluster.Stop(stopCtx); err != nil {
			fmt.Fprintln(os.Stderr, "pgrun:", err)
		}
		fmt.Fprintf(os.Stderr, "pgrun: kept the cluster in %s (server log %s)\n", cluster.Dir(), cluster.LogPath())
		return code
	}
	if err := cluster.Remove(stopCtx); err != nil {
		fmt.Fprintln(os.Stderr, "pgrun:", err)
	}
	if err := os.RemoveAll(scratch); err != nil {
		fmt.Fprintln(os.Stderr, "pgrun: remove scratch directory:", err)
	}
	return code
}

// withoutVar drops every assignment of name from env.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
