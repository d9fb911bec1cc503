package main

import (
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger returns a JSON logger writing to w at level. Every line has a
// timestamp, level and message; callers add structured fields.
//
// Without w it writes to standard error through a buffer flushed every
// 200 ms (and by Sync, which serve and dev call on the way out), so that a
// tool call's usage line costs no write system call of its own and never
// waits for a slow log reader. A crash loses at most the last 200 ms of
// lines; usage events reach Postgres in batches anyway.
func newLogger(level zapcore.Level, w zapcore.WriteSyncer) *zap.Logger {
	if w == nil {
		w = &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(os.Stderr), Size: 256 << 10, FlushInterval: logFlushInterval}
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "time"
	enc.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), w, level)
	return zap.New(core, zap.AddCaller())
}

// logFlushInterval bounds how long a log line waits in the buffer.
const logFlushInterval = 200 * time.Millisecond
