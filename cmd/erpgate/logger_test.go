package main

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/pgtest"
	"github.com/erpgate/erpgate/platform/secrets"
)

// TestServeFlushesBufferedLogsOnExit: serve buffers its log lines, so the
// last ones ("stopped", written just before the process exits) reach
// standard error only if the buffer is flushed on the way out.
func TestServeFlushesBufferedLogsOnExit(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.GenerateKeySpec("l1")
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	r := startReplica(t, bin, addr, map[string]string{
		"ERPGATE_PUBLIC_BASE_URL": "http://" + addr,
		"DATABASE_URL":            pgtest.NewDatabase(t),
		"ERPGATE_ADMIN_TOKEN":     admin.Value.Reveal(),
		"ERPGATE_ENCRYPTION_KEYS": keys,
		"ERPGATE_LOG_LEVEL":       "info",
	})
	r.stop(t)
	logs := r.logs.String()
	for _, want := range []string{`"msg":"listening"`, `"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("standard error lacks %s:\n%s", want, logs)
		}
	}
}
