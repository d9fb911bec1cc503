package usage

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// BenchmarkWriteBatch stores batches of 200 events, as a busy replica
// flushes them, by the COPY the recorder uses and by the insert it falls
// back to, back to back. Besides ns/op (one batch) it reports the CPU the
// PostgreSQL server's processes spent per event (pg-cpu-ns/event), which is
// what the usage events add to every call's share of PostgreSQL.
func BenchmarkWriteBatch(b *testing.B) {
	const size = 200
	for _, who := range []struct {
		name string
		set  func(*Event)
	}{
		{"service", func(e *Event) { e.ClientID = "0193a4c2-7f5e-7b61-9f0a-2d4e6c8a1b3f" }},
		{"oauth", func(e *Event) {
			e.AuthType, e.ERPUser, e.ClientID = "oauth", "accounts@demo.example", "c_4f3a9d0e6b7c8a1f2e3d4c5b6a7980ab"
		}},
	} {
		for _, way := range []struct {
			name  string
			write func(*Recorder, context.Context, []Event) error
		}{
			{"copy", (*Recorder).copyIn},
			{"insert", (*Recorder).insert},
		} {
			b.Run(who.name+"/"+way.name, func(b *testing.B) {
				pool := pgtest.NewPool(b)
				r := NewRecorder(pool, zap.NewNop(), Options{FlushInterval: time.Hour})
				defer r.Close(context.Background())
				site := uuid.New()
				batch := make([]Event, size)
				fill := func() {
					now := time.Now()
					for i := range batch {
						e := Event{ID: uuid.Must(uuid.NewV7()), Timestamp: now, SiteID: site, SiteSlug: "acme", AuthType: "service_token",
							RequestID: uuid.NewString(), Method: methodToolsCall, Tool: "list_customers", Outcome: Success, DurationMS: 3, ERPMS: 2}
						who.set(&e)
						batch[i] = e
					}
				}
				ctx := context.Background()
				for range 20 { // a table that is not empty, its pages cached
					fill()
					if err := way.write(r, ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				var pg, own time.Duration
				events := 0
				for b.Loop() {
					b.StopTimer()
					fill()
					before, ownBefore := postgresCPU(b), processCPU(b)
					b.StartTimer()
					if err := way.write(r, ctx, batch); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					own += processCPU(b) - ownBefore // before postgresCPU reads /proc
					pg += postgresCPU(b) - before
					events += size
					b.StartTimer()
				}
				b.ReportMetric(float64(pg)/float64(events), "pg-cpu-ns/event")
				b.ReportMetric(float64(own)/float64(events), "go-cpu-ns/event")
			})
		}
	}
}

// processCPU is the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU is the user and system CPU of every process named postgres
// on this machine: the test server's, when nothing else runs one.
func postgresCPU(b *testing.B) time.Duration {
	b.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		b.Fatal(err)
	}
	var ticks int64
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended
		}
		stat := string(raw)
		open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
		if open < 0 || end < open || stat[open+1:end] != "postgres" {
			continue
		}
		// After the name: state, then 10 fields before utime and stime.
		f := strings.Fields(stat[end+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	// Linux counts these in clock ticks of 1/100 s (USER_HZ).
	return time.Duration(ticks) * 10 * time.Millisecond
}
