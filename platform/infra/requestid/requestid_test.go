package requestid

import (
	"strings"
	"testing"
	"time"
)

func TestTimeReadsWhatNewWrote(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 15, 30, 123_456_789, time.UTC)
	id := New(at)
	if len(id) != Len || strings.ToLower(id) != id {
		t.Fatalf("New = %q: want %d lowercase hex digits", id, Len)
	}
	if got, ok := Time(id); !ok || !got.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("Time(%q) = %v, %v; want %v", id, got, ok, at.Truncate(time.Millisecond))
	}
	if New(at) == id {
		t.Errorf("two ids made in one millisecond are equal: %q", id)
	}
	for _, bad := range []string{
		"", id[:Len-1], id + "0", strings.ToUpper(id), id[:Len-1] + "g",
		"00aa5b1c0d2e3f4a5b6c7d8e", // 1970
		"ffffffffffff000000000000", // year 10889
	} {
		if got, ok := Time(bad); ok {
			t.Errorf("Time(%q) = %v, want not an id with a time", bad, got)
		}
	}
}

// FuzzTime: any text a person types as a request id reads as a time only
// when it is an id New could have made, and then as that time again.
func FuzzTime(f *testing.F) {
	for _, s := range []string{"", New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), "00aa5b1c0d2e3f4a5b6c7d8e", "zzzzzzzzzzzzzzzzzzzzzzzz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		at, ok := Time(s)
		if !ok {
			return
		}
		if len(s) != Len || strings.Trim(s, "0123456789abcdef") != "" {
			t.Fatalf("Time(%q) took text New never makes", s)
		}
		if again, ok := Time(New(at)); !ok || !again.Equal(at) {
			t.Fatalf("Time(New(%v)) = %v, %v", at, again, ok)
		}
	})
}
