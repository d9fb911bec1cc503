package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestWireCallerSpeaksHTTP: the light load generator's caller sends the
// step's method, path, headers and body; reads answers with and without a
// length (chunked); keeps one connection while the server keeps it, and
// dials again after the server closes it.
func TestWireCallerSpeaksHTTP(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Server-Timing", "erp;dur=1.5, total;dur=2")
		switch r.URL.Path {
		case "/chunked":
			w.WriteHeader(http.StatusCreated)
			fl := w.(http.Flusher)
			_, _ = io.WriteString(w, "first ")
			fl.Flush()
			_, _ = io.WriteString(w, "second")
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		default:
			_, _ = fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.RequestURI(), r.Header.Get("X-Token"), body)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	w := newWireCaller()
	defer w.close()
	ctx := context.Background()
	get := func(s step) (int, string, http.Header) {
		t.Helper()
		status, h, body, err := w.send(ctx, s)
		if err != nil {
			t.Fatalf("%s %s: %v", s.method, s.url, err)
		}
		return status, string(body), h
	}
	status, body, h := get(step{method: http.MethodPost, url: srv.URL + "/mcp?x=1", header: http.Header{"X-Token": {"t1"}}, body: []byte(`{"a":1}`)})
	if status != 200 || body != `POST /mcp?x=1 t1 {"a":1}` || h.Get("Server-Timing") == "" {
		t.Fatalf("got %d %q %v", status, body, h)
	}
	if status, body, _ = get(step{method: http.MethodGet, url: srv.URL + "/chunked"}); status != 201 || body != "first second" {
		t.Fatalf("chunked: %d %q", status, body)
	}
	get(step{method: http.MethodGet, url: srv.URL + "/plain"})
	if n := conns.Load(); n != 1 {
		t.Fatalf("three calls on a kept connection dialled %d times", n)
	}
	if _, body, _ = get(step{method: http.MethodGet, url: srv.URL + "/close"}); body != "bye" {
		t.Fatalf("close: %q", body)
	}
	if _, body, _ = get(step{method: http.MethodGet, url: srv.URL + "/after"}); body != "GET /after  " {
		t.Fatalf("after close: %q", body)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("a call after the server closed its connection: %d dials in all, want 2", n)
	}
	outcome, timing := doCall(ctx, w, []step{{method: http.MethodGet, url: srv.URL + "/plain"}}, func(status int, _ http.Header, _ []byte) string {
		if status != 200 {
			return "bad"
		}
		return ""
	})
	if outcome != "" || timing.erp != 1500000 || timing.total != 2000000 {
		t.Fatalf("doCall over a wireCaller: %q %+v", outcome, timing)
	}
	if _, _, _, err := w.send(ctx, step{method: http.MethodGet, url: "https://" + srv.Listener.Addr().String()}); err == nil {
		t.Fatal("an https step went out over plain TCP")
	}
}

// TestReplayServesTheFirstAnswerAgain: in replay mode the simulator's
// first answer to a request is served again without asking it, per
// request URI and credentials; only 200 answers to GET are kept; off
// forgets them.
func TestReplayServesTheFirstAnswerAgain(t *testing.T) {
	var asked atomic.Int64
	h := &benchHandler{sim: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asked.Add(1)
		if r.URL.Path == "/missing" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Page", "1")
		_, _ = fmt.Fprintf(w, `{"n":%d,"auth":%q}`, n, r.Header.Get("Authorization"))
	})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctl := httptest.NewServer(h.control())
	defer ctl.Close()
	p := &simProcess{simHello: simHello{Control: ctl.URL}, ctl: ctl.Client()}
	call := func(method, path, auth string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Authorization", auth)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if _, b, _ := call("GET", "/a", "A"); b != `{"n":1,"auth":"A"}` {
		t.Fatalf("before replay: %s", b)
	}
	if err := p.replaying(true); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"n":2,"auth":"A"}`, `{"n":2,"auth":"A"}`, `{"n":2,"auth":"A"}`} {
		status, b, hdr := call("GET", "/a", "A")
		if status != 200 || b != want || hdr.Get("X-Page") != "1" || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("replayed call %d: %d %s %v", i, status, b, hdr)
		}
	}
	if _, b, _ := call("GET", "/a", "B"); b != `{"n":3,"auth":"B"}` {
		t.Fatalf("other credentials were answered from another's answer: %s", b)
	}
	if _, b, _ := call("GET", "/a?page=2", "A"); b != `{"n":4,"auth":"A"}` {
		t.Fatalf("another query: %s", b)
	}
	_, _, _ = call("POST", "/a", "A")
	if _, b, _ := call("POST", "/a", "A"); b != `{"n":6,"auth":"A"}` {
		t.Fatalf("a POST was replayed: %s", b)
	}
	call("GET", "/missing", "A")
	if status, _, _ := call("GET", "/missing", "A"); status != 404 || asked.Load() != 8 {
		t.Fatalf("an error answer was replayed: %d, simulator asked %d times", status, asked.Load())
	}
	if err := p.replaying(false); err != nil {
		t.Fatal(err)
	}
	if _, b, _ := call("GET", "/a", "A"); b != `{"n":9,"auth":"A"}` {
		t.Fatalf("after replay off: %s", b)
	}
}

// TestSampledCheckCatchesFailures: the cheap look between full checks
// still refuses an HTTP error, a JSON-RPC error and a tool error, and the
// full check runs on the first answer and every nth.
func TestSampledCheckCatchesFailures(t *testing.T) {
	var full int
	check := sampledCheck(func(int, http.Header, []byte) string { full++; return "" }, 4)
	ok := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{}}}`)
	for i := range 8 {
		if out := check(200, nil, ok); out != "" {
			t.Fatalf("answer %d: %q", i, out)
		}
	}
	if full != 2 {
		t.Fatalf("full checks: %d of 8 answers, want 2", full)
	}
	for _, c := range []struct {
		status int
		body   string
		want   string
	}{
		{503, `{"jsonrpc":"2.0","id":1,"result":{}}`, "http_503"},
		{200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`, "no_result"},
		{200, `{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}`, "tool_error"},
		{200, `<html>`, "invalid_json"},
	} {
		check(200, nil, ok) // the full check's turn
		for range 3 {
			if out := check(c.status, nil, []byte(c.body)); out != c.want {
				t.Errorf("%d %s: %q, want %q", c.status, c.body, out, c.want)
			}
		}
	}
}

// TestBadStepIsNamedAsSuch: a step that cannot become a request is
// reported as the request it is, by either sender, not as a transport
// failure.
func TestBadStepIsNamedAsSuch(t *testing.T) {
	ok := func(int, http.Header, []byte) string { return "" }
	bad := []step{{method: http.MethodGet, url: "http://[::1"}}
	for name, snd := range map[string]sender{"client": clientSender{&http.Client{}}, "wire": newWireCaller()} {
		if out, _ := doCall(context.Background(), snd, bad, ok); len(out) < 9 || out[:9] != "request: " {
			t.Errorf("%s: %q, want a request: outcome", name, out)
		}
	}
}
