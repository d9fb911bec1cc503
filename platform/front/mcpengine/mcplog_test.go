package mcpengine

import (
	"log/slog"
	"testing"

	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestMCPGoLinesKeepPanicsAsErrors: mcp-go's transport errors are about
// callers and go to the log as warnings, but a panic it recovered in one
// of its goroutines is a bug on the server and keeps its error level, so
// that it reaches the operator's error alerts.
func TestMCPGoLinesKeepPanicsAsErrors(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	log := slog.New(warnAtMost{zapslog.NewHandler(core, zapslog.WithName("mcp-go"))})
	log.Error("Failed to write SSE event", "err", "broken pipe")
	log.Error("panic in heartbeat goroutine", "panic", "index out of range")
	log.Info("session registered")
	want := []zapcore.Level{zapcore.WarnLevel, zapcore.ErrorLevel, zapcore.InfoLevel}
	got := logs.All()
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Level != want[i] {
			t.Errorf("%q logged at %s, want %s", e.Message, e.Level, want[i])
		}
	}
}
