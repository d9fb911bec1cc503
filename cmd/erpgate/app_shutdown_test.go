package main

import (
	"context"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/config"
	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestStopRequestedAsServingStarts: a replica told to stop just as it
// starts to serve (SIGTERM during start-up) stops, instead of serving on
// with nobody left to shut it down. The stop is requested from the
// started callback, before the server's goroutine has run.
func TestStopRequestedAsServingStarts(t *testing.T) {
	addr := freeport.Loopback(t)
	env, _ := replicaEnv(t, addr, pgtest.NewDatabase(t), map[string]string{"ERPGATE_LISTEN_ADDR": addr})
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serveUntilDone(ctx, cfg, newLogger(cfg.LogLevel, &syncBuffer{}), func(string) { cancel() })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveUntilDone: %v", err)
		}
	case <-time.After(30 * time.Second): // turns a hang into a failure
		t.Fatal("the replica went on serving after it was told to stop")
	}
}
