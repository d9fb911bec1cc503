package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestSettingsPollSurvivesSilentConnections: replica B's connections to
// Postgres all go silent (a network partition that drops the flows
// without a reset), and while B's new connections are held, the operator
// changes a setting through replica A. B's listener misses that
// notification; the 500 ms poll of the live settings is what brings the
// change, once B can connect again. The poll must not stay stuck on a
// silent pooled connection (for as long as the kernel takes to give up on
// it, a quarter of an hour), leaving B on the old setting.
func TestSettingsPollSurvivesSilentConnections(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	a := startGateway(t, db, nil)
	cut := pgtest.NewSilencer(t, db)
	b := startGateway(t, cut.URL, map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": a.Keys})
	// Before B shuts down, its silent connections are closed.
	t.Cleanup(cut.CloseAll)
	if got := b.App.live.Current().Deployment.MaxRecords; got == 7 {
		t.Fatalf("max_records is 7 before the change")
	}

	cut.SilenceAll()
	cut.Hold()
	if err := a.admin.do(ctx, http.MethodPut, "/settings/max_records", map[string]any{"value": 7}, nil); err != nil {
		t.Fatal(err)
	}
	cut.Release()
	deadline := time.Now().Add(20 * time.Second)
	for b.App.live.Current().Deployment.MaxRecords != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("replica B still has max_records %d, 20 s after the change", b.App.live.Current().Deployment.MaxRecords)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
