package pgcluster

import (
	"os"
	"strings"
)

// logTailLines is how much of the server log a start failure quotes.
const logTailLines = 15

// logTail returns the last lines of the log at path, for error messages, or
// "" when it cannot be read.
func logTail(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > logTailLines {
		lines = lines[len(lines)-logTailLines:]
	}
	return strings.Join(lines, "\n")
}

// withLogTail appends the log's tail to a failure message.
func withLogTail(msg, path string) string {
	tail := logTail(path)
	if tail == "" {
		return msg + " (see " + path + ")"
	}
	return msg + "; last lines of " + path + ":\n" + tail
}
