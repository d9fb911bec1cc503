package main

import (
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/platform/infra/logbuffer"
)

// newLogger returns a JSON logger writing to w at level. Every line has a
// timestamp, level and message; callers add structured fields.
//
// Without w it writes to standard error through newBufferedLogger's
// buffer.
func newLogger(level zapcore.Level, w zapcore.WriteSyncer) *zap.Logger {
	if w == nil {
		return newBufferedLogger(level, zapcore.AddSync(os.Stderr))
	}
	return zap.New(zapcore.NewCore(logEncoder(), w, level), zap.AddCaller())
}

// newBufferedLogger returns newLogger's logger writing to out through a
// buffer flushed every 200 ms, when half full, and by Sync (which serve and
// dev call on the way out), so that a tool call's usage line costs no
// write system call of its own. A crash loses at most the last 200 ms of
// lines; usage events reach Postgres in batches anyway.
//
// A log call never waits for the log reader: while the reader is behind,
// lines that do not fit are dropped and counted (logbuffer; a line then
// says how many, and erpgate_log_dropped_lines_total counts them), so a
// stalled standard error pipe cannot hold up every tenant's tool calls.
func newBufferedLogger(level zapcore.Level, out zapcore.WriteSyncer) *zap.Logger {
	w := logbuffer.New(out, logEncoder(), logbuffer.Options{Size: logBufferSize, FlushInterval: logFlushInterval})
	return zap.New(w.Core(level), zap.AddCaller())
}

// logSyncLimit bounds the last flush of the log on the way out: a
// stalled log reader must not keep a stopping replica alive.
const logSyncLimit = 5 * time.Second

// syncLog flushes log's buffered lines, waiting at most limit for the log
// reader; what it has not taken by then is lost, as it would be to the
// SIGKILL that otherwise ends the process.
func syncLog(log *zap.Logger, limit time.Duration) {
	done := make(chan struct{})
	go func() {
		_ = log.Sync()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// droppedLogLines is the buffered logger's count of lines dropped, for
// /metrics; ok is false for a logger without one (tests' loggers).
func droppedLogLines(log *zap.Logger) (dropped func() uint64, ok bool) {
	c, ok := log.Core().(interface{ Dropped() uint64 })
	if !ok {
		return nil, false
	}
	return c.Dropped, true
}

// logEncoder writes JSON lines with an RFC 3339 "time".
func logEncoder() zapcore.Encoder {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	return zapcore.NewJSONEncoder(enc)
}

const (
	// logBufferSize bounds the log lines waiting for the log reader.
	logBufferSize = 256 << 10
	// logFlushInterval bounds how long a log line waits in the buffer.
	logFlushInterval = 200 * time.Millisecond
)
