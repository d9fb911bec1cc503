package logbuffer

import (
	"io"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The Writer must cost a log line no more than the
// zapcore.BufferedWriteSyncer it replaced (a usage line per tool call):
// each pair writes the same lines to io.Discard, with erpgate's sizes.

var benchLine = line(12345)

func BenchmarkWrite(b *testing.B) {
	w := New(zapcore.AddSync(io.Discard), encoder(), Options{Size: 256 << 10, FlushInterval: 200 * time.Millisecond})
	defer w.Stop()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchLine)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = w.Write(benchLine)
		}
	})
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "drops/op")
}

func BenchmarkWriteBufferedWriteSyncer(b *testing.B) {
	w := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(io.Discard), Size: 256 << 10, FlushInterval: 200 * time.Millisecond}
	defer func() { _ = w.Stop() }()
	b.ReportAllocs()
	b.SetBytes(int64(len(benchLine)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = w.Write(benchLine)
		}
	})
}

// The same through zap, with the fields of a usage line.
func benchLog(b *testing.B, log *zap.Logger) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			log.Info("MCP list_sales_invoices: success",
				zap.String("event", "mcp_request"), zap.String("site_slug", "acme"),
				zap.String("request_id", "01JD5X7R4E2Q9V3K8M6N1P0T2W"), zap.Int64("duration_ms", 42))
		}
	})
}

func BenchmarkLog(b *testing.B) {
	w := New(zapcore.AddSync(io.Discard), encoder(), Options{Size: 256 << 10, FlushInterval: 200 * time.Millisecond})
	defer w.Stop()
	benchLog(b, zap.New(w.Core(zapcore.InfoLevel)))
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "drops/op")
}

func BenchmarkLogBufferedWriteSyncer(b *testing.B) {
	w := &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(io.Discard), Size: 256 << 10, FlushInterval: 200 * time.Millisecond}
	defer func() { _ = w.Stop() }()
	benchLog(b, zap.New(zapcore.NewCore(encoder(), w, zapcore.InfoLevel)))
}
