package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// readyPollInterval is the pause between connection attempts while the
	// server starts.
	readyPollInterval = 50 * time.Millisecond
	// probeTimeout bounds one connection attempt.
	probeTimeout = 2 * time.Second
)

// errPostmasterExited means the server process ended before it accepted a
// connection.
var errPostmasterExited = errors.New("postmaster exited before accepting connections")

// waitReady polls until a superuser connection to url succeeds, the process
// exits, or ctx ends.
func waitReady(ctx context.Context, url string, pm *postmaster) error {
	if pm.exited != nil {
		// A connection attempt can hang on a port that another program
		// holds; abandon it as soon as our server has died.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-pm.exited:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var lastErr error
	for {
		if pm.hasExited() {
			return errPostmasterExited
		}
		if lastErr = probe(ctx, url); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if pm.hasExited() {
				return errPostmasterExited
			}
			return fmt.Errorf("pgcluster: wait for postgres to accept connections: %w (last attempt: %v)", ctx.Err(), lastErr)
		case <-time.After(readyPollInterval):
		}
	}
}

// probe opens and closes one connection.
func probe(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse probe URL: %w", err)
	}
	cfg.ConnectTimeout = probeTimeout
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
