package logbuffer

import "go.uber.org/zap/zapcore"

// Core returns a zap core that encodes with the Writer's encoder the
// entries enab enables and buffers them in the Writer: lines at error level
// and above may use the share of the buffer kept for them.
func (w *Writer) Core(enab zapcore.LevelEnabler) zapcore.Core {
	return &core{LevelEnabler: enab, enc: w.enc, w: w}
}

// Dropped is the Writer's count of dropped lines, for a caller that holds
// only the logger (zap.Logger.Core).
func (c *core) Dropped() uint64 { return c.w.Dropped() }

type core struct {
	zapcore.LevelEnabler
	enc zapcore.Encoder
	w   *Writer
}

// Level lets zap read the core's minimum level (zapcore.LevelOf).
func (c *core) Level() zapcore.Level { return zapcore.LevelOf(c.LevelEnabler) }

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	enc := c.enc.Clone()
	for i := range fields {
		fields[i].AddTo(enc)
	}
	return &core{LevelEnabler: c.LevelEnabler, enc: enc, w: c.w}
}

func (c *core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	buf, err := c.enc.EncodeEntry(ent, fields)
	if err != nil {
		return err
	}
	c.w.write(buf.Bytes(), ent.Level >= zapcore.ErrorLevel)
	buf.Free()
	// A panic or a fatal error ends the process: write its line now.
	// (zap's own core also syncs on DPanic, which in production is an
	// ordinary error line; here that would let a stalled reader hold the
	// caller.)
	if ent.Level >= zapcore.PanicLevel {
		_ = c.w.Sync()
	}
	return nil
}

func (c *core) Sync() error { return c.w.Sync() }
