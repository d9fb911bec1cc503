package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
)

// durationIn accepts a Go duration ("50s", "1m30s") within [lo, hi].
func durationIn(lo, hi time.Duration, field func(*Config) *time.Duration) func(*Config, value) error {
	return func(c *Config, v value) error {
		d, err := time.ParseDuration(v.text)
		if err != nil {
			return fmt.Errorf("must be a duration such as 30s or 1m; got %q", v.text)
		}
		if d < lo || d > hi {
			return fmt.Errorf("must be between %s and %s; got %q", lo, hi, v.text)
		}
		*field(c) = d
		return nil
	}
}

// intIn accepts a base-10 integer within [lo, hi]. An upper bound of
// math.MaxInt32 reads as "no practical limit" in the problem text.
func intIn[T int | int64](lo, hi T, field func(*Config) *T) func(*Config, value) error {
	return func(c *Config, v value) error {
		n, err := strconv.ParseInt(v.text, 10, 64)
		if err != nil || n < int64(lo) || n > int64(hi) {
			if int64(hi) == math.MaxInt32 {
				return fmt.Errorf("must be a whole number of at least %d; got %q", lo, v.text)
			}
			return fmt.Errorf("must be a whole number from %d to %d; got %q", lo, hi, v.text)
		}
		*field(c) = T(n)
		return nil
	}
}

// boolean accepts true/false and the other spellings strconv.ParseBool knows.
func boolean(field func(*Config) *bool) func(*Config, value) error {
	return func(c *Config, v value) error {
		b, err := strconv.ParseBool(v.text)
		if err != nil {
			return fmt.Errorf("must be true or false; got %q", v.text)
		}
		*field(c) = b
		return nil
	}
}

// logLevels are the accepted log levels; zap's panic levels are not
// offered because they change behaviour, not verbosity.
var logLevels = map[string]zapcore.Level{
	"debug": zapcore.DebugLevel,
	"info":  zapcore.InfoLevel,
	"warn":  zapcore.WarnLevel,
	"error": zapcore.ErrorLevel,
}

func applyLogLevel(c *Config, v value) error {
	level, ok := logLevels[strings.ToLower(v.text)]
	if !ok {
		return fmt.Errorf("must be one of debug, info, warn, error; got %q", v.text)
	}
	c.LogLevel = level
	return nil
}
