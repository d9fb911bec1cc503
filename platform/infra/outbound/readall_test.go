package outbound

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAllWithAnnouncedLength(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	for _, c := range []struct {
		name   string
		length int64
	}{{"exact", 100_000}, {"announced shorter", 10}, {"announced longer", 200_000}, {"unknown", -1}} {
		got, err := readAll(iotest.HalfReader(strings.NewReader(body)), c.length)
		if err != nil || string(got) != body {
			t.Errorf("%s: %d bytes, %v", c.name, len(got), err)
		}
	}
	broken := errors.New("connection reset")
	if _, err := readAll(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(broken)), 10); !errors.Is(err, broken) {
		t.Errorf("read error lost: %v", err)
	}
}

// TestReadAllAllocatesOnceForAKnownLength guards the large-response path:
// a body of announced length is read into one buffer of its size, not
// copied through a growing one.
func TestReadAllAllocatesOnceForAKnownLength(t *testing.T) {
	body := bytes.Repeat([]byte("y"), 1<<20)
	r := bytes.NewReader(body)
	allocs := testing.AllocsPerRun(10, func() {
		r.Reset(body)
		if _, err := readAll(r, int64(len(body))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations to read a body of known length", allocs)
	}
}
