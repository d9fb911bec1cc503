package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/pgcluster"
)

// benchPostgres is the benchmark's private PostgreSQL cluster.
type benchPostgres struct {
	cluster *pgcluster.Cluster
	scratch string
	// Settings are the server settings beyond PostgreSQL's defaults.
	Settings map[string]string
}

// startPostgres starts a private cluster in a scratch directory. It keeps
// PostgreSQL's durable defaults (fsync and synchronous_commit on), as a
// production server has them; only max_connections is raised for the
// sweep's replicas and parallel query, which needs shared memory that
// containers lack, is off.
func startPostgres(ctx context.Context) (*benchPostgres, error) {
	scratch, err := pgcluster.NewScratchDir("erpgate-bench-")
	if err != nil {
		return nil, err
	}
	settings := map[string]string{
		"max_connections":                 "200",
		"max_parallel_workers_per_gather": "0",
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: filepath.Join(scratch, "cluster"), Settings: settings})
	if err != nil {
		os.RemoveAll(scratch)
		return nil, err
	}
	return &benchPostgres{cluster: c, scratch: scratch, Settings: settings}, nil
}

// createDatabase creates an empty database and returns its URL.
func (p *benchPostgres) createDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, p.cluster.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return p.cluster.URL(name), nil
}

// pid is the postmaster's process id, the root of Postgres's processes.
func (p *benchPostgres) pid() int {
	return postmasterPID(filepath.Join(p.cluster.Dir(), "pgdata"))
}

func (p *benchPostgres) remove(ctx context.Context) {
	_ = p.cluster.Remove(ctx)
	_ = os.RemoveAll(p.scratch)
}
