package logbuffer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestSentPathKeepsABoundedValidStart: a path of any length its sender
// chose is logged as its first 200 bytes, cut on a character's boundary,
// and its length; a short one as it is.
func TestSentPathKeepsABoundedValidStart(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(core)
	long := "/sites/" + strings.Repeat("é", 30000) + "/oauth/callback"
	log.Info("long", SentPath(long)...)
	log.Info("short", SentPath("/sites/acme/oauth/callback")...)
	entries := logs.All()
	got := entries[0].ContextMap()
	path, _ := got["path"].(string)
	if len(path) > 200+len("…") || !utf8.ValidString(path) || !strings.HasPrefix(path, "/sites/éé") || !strings.HasSuffix(path, "…") {
		t.Errorf("a long path logged as %d bytes %q", len(path), path)
	}
	if got["path_bytes"] != int64(len(long)) {
		t.Errorf("path_bytes %v, want %d", got["path_bytes"], len(long))
	}
	if short := entries[1].ContextMap(); short["path"] != "/sites/acme/oauth/callback" || short["path_bytes"] != int64(26) {
		t.Errorf("a short path logged as %v", short)
	}
}
