package main

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestServeFlushesBufferedLogsOnExit: serve buffers its log lines, so the
// last ones ("stopped", written just before the process exits) reach
// standard error only if the buffer is flushed on the way out.
func TestServeFlushesBufferedLogsOnExit(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeport.Loopback(t)
	env, _ := replicaEnv(t, addr, pgtest.NewDatabase(t), map[string]string{"ERPGATE_LOG_LEVEL": "info"})
	r := startReplica(t, bin, addr, env)
	r.stop(t)
	logs := r.logs.String()
	for _, want := range []string{`"msg":"listening"`, `"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("standard error lacks %s:\n%s", want, logs)
		}
	}
}
