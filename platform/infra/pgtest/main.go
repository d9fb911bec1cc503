package pgtest

import (
	"fmt"
	"os"
	"testing"
)

// Main runs the package's tests and then removes the private cluster, if
// one was started. Use it as `func TestMain(m *testing.M) { pgtest.Main(m) }`.
// It exits the process with m.Run's code.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: clean up the test database server: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
