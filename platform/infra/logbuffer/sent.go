package logbuffer

import (
	"strings"

	"go.uber.org/zap"
)

// sentPathBytes is how much of a path a request's sender chose a log line
// keeps.
const sentPathBytes = 200

// SentPath is the log fields of a path its request's sender chose (a route
// parameter matches any text up to the request line's bound): path, its
// first sentPathBytes bytes, and path_bytes, its length. A line that
// carried the whole path could take a good part of the buffer, and a few
// such requests would have other lines dropped.
func SentPath(path string) []zap.Field {
	kept := path
	if len(kept) > sentPathBytes {
		kept = strings.ToValidUTF8(kept[:sentPathBytes], "") + "…"
	}
	return []zap.Field{zap.String("path", kept), zap.Int("path_bytes", len(path))}
}
