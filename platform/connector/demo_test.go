package connector_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
)

type savedClient struct {
	ID, Secret string
}

// TestDemoSavedKeepsOneValuePerID: Put replaces the value with the same id
// or appends, saves the whole list each time, and the next run reads back
// exactly what was saved.
func TestDemoSavedKeepsOneValuePerID(t *testing.T) {
	var saved json.RawMessage
	env := connector.DemoEnv{Save: func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		saved = b
	}}
	id := func(c savedClient) string { return c.ID }
	s, err := connector.NewDemoSaved(env, id)
	if err != nil || len(s.Items()) != 0 {
		t.Fatalf("first run: %v, %v; want an empty list", s.Items(), err)
	}
	s.Put(savedClient{"a", "1"})
	s.Put(savedClient{"b", "2"})
	s.Put(savedClient{"a", "3"})
	if want := `[{"ID":"a","Secret":"3"},{"ID":"b","Secret":"2"}]`; string(saved) != want {
		t.Fatalf("saved %s, want %s", saved, want)
	}

	next, err := connector.NewDemoSaved(connector.DemoEnv{Saved: saved}, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Items(); len(got) != 2 || got[0] != (savedClient{"a", "3"}) || got[1] != (savedClient{"b", "2"}) {
		t.Fatalf("the next run reads %v", got)
	}
	// Without a Save (a demo started outside erpgate dev), Put only keeps.
	next.Put(savedClient{"c", "4"})
	if len(next.Items()) != 3 {
		t.Fatalf("Put without Save: %v", next.Items())
	}
}

// TestDemoSavedRefusesWhatItCannotRead: a damaged file is an error, not
// an empty list that would overwrite it.
func TestDemoSavedRefusesWhatItCannotRead(t *testing.T) {
	if _, err := connector.NewDemoSaved(connector.DemoEnv{Saved: json.RawMessage(`{"ID":"a"}`)}, func(c savedClient) string { return c.ID }); err == nil {
		t.Fatal("an object where a list belongs was read without an error")
	}
}

// TestServeDemo serves on the given address, or on the fallback when it is
// empty, and stops.
func TestServeDemo(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "simulator") })
	for _, addrs := range [][2]string{{"127.0.0.1:0", "192.0.2.1:1"}, {"", "127.0.0.1:0"}} {
		url, stop, err := connector.ServeDemo(addrs[0], addrs[1], h)
		if err != nil {
			t.Fatalf("ServeDemo(%q, %q): %v", addrs[0], addrs[1], err)
		}
		res, err := http.Get(url + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if string(body) != "simulator" {
			t.Errorf("%s answered %q", url, body)
		}
		stop()
		if _, err := http.Get(url + "/"); err == nil {
			t.Errorf("%s still answers after stop", url)
		}
	}
}
