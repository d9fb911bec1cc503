package mcpengine

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// largeServerVersion is a server version (Options.Version) that makes a
// subscriptions/listen's event stream large: the stream's result names the
// server, its version included, in its _meta, some 3 MB, well beyond what
// a connection's buffers take in. (A client's long id once did the same;
// ids are bounded now, maxIDBytes.)
var largeServerVersion = strings.Repeat("v", 3<<20)

// listenBody is a 2026-07-28 subscriptions/listen.
const listenBody = `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":` +
	`{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`

// dialStalledListen sends a subscriptions/listen of body as caller on a
// connection that takes in next to nothing of what it is sent, and never
// reads: a client that asks for an event stream and then stops reading.
func dialStalledListen(t *testing.T, endpoint, caller, body string) net.Conn {
	t.Helper()
	u, _ := url.Parse(endpoint)
	conn := dialNonReader(t, u.Host)
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"%s: %s\r\n%s: %s\r\nX-Test-Caller: %s\r\nContent-Length: %d\r\n\r\n%s",
		u.RequestURI(), u.Host, mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728, mcp.HeaderMethod, mcp.MethodSubscriptionsListen,
		caller, len(body), body)
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	// The status line says the stream has begun; nothing more is read.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	head := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(conn, head); err != nil || string(head) != "HTTP/1.1 200" {
		t.Fatalf("the stream's status line: %q, %v", head, err)
	}
	return conn
}

// TestStalledEventStreamReaderIsCutOff: a reply written as an event
// stream had no write deadline, unlike a JSON reply (writeReply): a
// client that asked for a large subscriptions/listen stream and then did
// not read held its call slot, its work slot, the stream's bytes and two
// goroutines for as long as it kept the connection open. Now each write of an event stream must be
// taken in within the reply timeout (BodyTimeout), as a JSON reply must,
// and the connection is closed past it, giving the slots back.
func TestStalledEventStreamReaderIsCutOff(t *testing.T) {
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 2, CallerShare: 100, BodyTimeout: time.Second, Version: largeServerVersion})
	dialStalledListen(t, endpoint, "stalled", listenBody)
	// The stream holds its call slot once it is let in…
	waitCount(t, e.admission, "call slots free", e.admission.calls-1, func() int { return e.admission.callsFree })
	// …and past the reply timeout gives it back, its connection closed.
	waitCount(t, e.admission, "call slots free", e.admission.calls, func() int { return e.admission.callsFree })
	waitCount(t, e.admission, "work slots free", 2, func() int { return e.admission.free })
}

// TestStalledEventStreamHoldsNoWorkSlot: a subscriptions/listen whose
// stream was not taken in held one of the replica's few work slots while
// its writes waited, where a JSON reply gives its work slot back before it
// is written (writeReply): callers stalling their streams could take
// every work slot and leave other callers waiting at the door. The
// listen's work is done once its handler has returned; from then on it
// holds only its call slot, until the reply timeout (here far beyond the
// test).
func TestStalledEventStreamHoldsNoWorkSlot(t *testing.T) {
	// One work slot: the other caller is served only if the stalled
	// stream does not hold it.
	endpoint, _, _, _, e := gatedEngineWith(t, Options{Budget: time.Second, MaxActive: 1, CallerShare: 100, BodyTimeout: time.Hour, Version: largeServerVersion})
	dialStalledListen(t, endpoint, "stalled", listenBody)
	waitCount(t, e.admission, "work slots free", 1, func() int { return e.admission.free })
	if status, _, body := postAs(t, endpoint, "other", "quick"); status != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("another caller's call while a stream is stalled: %d %s", status, body)
	}
	// The stalled stream still holds its call slot.
	waitCount(t, e.admission, "call slots free", e.admission.calls-1, func() int { return e.admission.callsFree })
}

// streamServer serves one event stream through the engine's reply writer,
// with a reply timeout of timeout: it writes each event the test sends on
// the returned channel, and reports on the other how the stream ended
// (nil: the test sent nil, the stream's end; else the write that failed).
func streamServer(t *testing.T, timeout time.Duration) (url string, events chan<- []byte, ended <-chan error) {
	t.Helper()
	next, end := make(chan []byte), make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := newReplyWriter(w, "")
		rw.ctx, rw.st = r.Context(), &requestState{replyTimeout: timeout}
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(http.StatusOK)
		rw.Flush()
		for {
			var ev []byte
			select {
			case ev = <-next:
			case <-r.Context().Done():
				return
			}
			if ev == nil {
				end <- nil
				return
			}
			if _, err := rw.Write(ev); err != nil {
				end <- err
				return
			}
			rw.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, next, end
}

// event is an SSE event whose data is n bytes.
func event(n int) []byte {
	return []byte("event: message\ndata: " + strings.Repeat("x", n) + "\n\n")
}

// TestEventStreamDeadlineIsEachEvents: the reply timeout bounds each
// write of an event stream, not the stream: a client that reads keeps a
// stream that lasts many times the timeout, with pauses longer than it
// between events; one that stops reading part way is cut off at the
// first write it does not take in.
func TestEventStreamDeadlineIsEachEvents(t *testing.T) {
	// Short, so that the pauses are longer than it; the events are small
	// enough that the connection's buffers take each in at once.
	const timeout = 100 * time.Millisecond
	t.Run("reader keeps its stream", func(t *testing.T) {
		url, events, ended := streamServer(t, timeout)
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for i := range 4 {
			events <- event(8 << 10)
			line, err := br.ReadString('\n')
			if err != nil || line != "event: message\n" {
				t.Fatalf("event %d: %q, %v", i, line, err)
			}
			if data, err := br.ReadString('\n'); err != nil || len(data) != len("data: \n")+8<<10 {
				t.Fatalf("event %d: %d bytes of data, %v", i, len(data), err)
			}
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			// A pause longer than the timeout, as between pings.
			time.Sleep(3 * timeout)
		}
		events <- nil
		if err := <-ended; err != nil {
			t.Errorf("a stream read to its end: %v", err)
		}
	})
	t.Run("stalled reader is cut off", func(t *testing.T) {
		url, events, ended := streamServer(t, timeout)
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		events <- event(10)
		if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "event: message\n" {
			t.Fatalf("first event: %q, %v", line, err)
		}
		// The client reads no more; the server goes on writing until a
		// write fails.
		for {
			select {
			case events <- event(1 << 20):
				continue
			case err := <-ended:
				if err == nil {
					t.Fatal("the stream ended without a failed write")
				}
				return
			case <-time.After(20 * time.Second):
				t.Fatal("a write to a client that stopped reading was not cut off")
			}
		}
	})
}
