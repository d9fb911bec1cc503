package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// listenRequest is a 2026-07-28 subscriptions/listen on /service/mcp
// with token.
func listenRequest(host, token string) string {
	body := `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + mcp.ProtocolVersion20260728 + `","` + mcp.MetaKeyClientInfo + `":{"name":"test","version":"1"},"` +
		mcp.MetaKeyClientCapabilities + `":{}}}}`
	return fmt.Sprintf("POST /service/mcp HTTP/1.1\r\nHost: %s\r\nX-Erpgate-Service-Token: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\n%s: %s\r\n%s: %s\r\nContent-Length: %d\r\n\r\n%s",
		host, token, mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728, mcp.HeaderMethod, mcp.MethodSubscriptionsListen, len(body), body)
}

// TestStalledEventStreamGivesTheReplicaBack: through the whole gateway, a
// service token's client asks for a subscriptions/listen event stream
// and stops reading. The stream is made large (some 3 MB) by the
// gateway's version, which its result names; a client's long id once did
// the same, and ids are bounded now. The replica has a single request slot.
// Another site's tool call waits at the door for it: before, the stalled
// stream held the slot until its client closed the connection, and the
// call was refused 503 once its budget ran out; now the stream's write
// is cut off past ERPGATE_HTTP_BODY_TIMEOUT, its connection closed, and
// the call is served. A client that reads its stream gets it whole.
func TestStalledEventStreamGivesTheReplicaBack(t *testing.T) {
	ctx := context.Background()
	large := strings.Repeat("v", 3<<20)
	was := version
	version = large
	t.Cleanup(func() { version = was })
	stalledSim, otherSim := frappetest.NewServer(frappetest.Options{}), frappetest.NewServer(frappetest.Options{})
	defer stalledSim.Close()
	defer otherSim.Close()
	gw := startGateway(t, "", map[string]string{
		"ERPGATE_HTTP_BODY_TIMEOUT":   "1s",
		"ERPGATE_LIMIT_REPLICA_CALLS": "1",
		"ERPGATE_UPSTREAM_BUDGET":     "20s",
	})
	stalled := gw.registerFrappe(t, "stalled", stalledSim, userWithRole(t, stalledSim, "service"))
	other := gw.registerFrappe(t, "other", otherSim, userWithRole(t, otherSim, "service"))
	u, _ := url.Parse(gw.URL)

	// A client that reads gets the acknowledgement and the result, each
	// with its id.
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(listenRequest(u.Host, stalled.ServiceToken))); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := io.ReadAll(resp.Body)
	_ = conn.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || err != nil {
		t.Fatalf("a listen read by its client: %s %s, %d bytes, %v", resp.Status, resp.Header.Get("Content-Type"), len(stream), err)
	}
	if !strings.Contains(string(stream), large) || !strings.Contains(string(stream), `"listen-1"`) ||
		!strings.Contains(string(stream), string(mcp.MethodNotificationSubscriptionsAcknowledged)) {
		t.Fatalf("a listen read by its client: %d bytes, want the acknowledgement and the result naming the server's version", len(stream))
	}

	// A client that stops reading: a small receive buffer, and nothing
	// read after the status line.
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	slow, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte(listenRequest(u.Host, stalled.ServiceToken))); err != nil {
		t.Fatal(err)
	}
	_ = slow.SetReadDeadline(time.Now().Add(30 * time.Second))
	head := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(slow, head); err != nil || string(head) != "HTTP/1.1 200" {
		t.Fatalf("the stalled stream's status line: %q, %v", head, err)
	}
	// The stream holds the replica's one request slot: the other site's
	// call waits at the door until it is given back.
	client := &http.Client{Timeout: time.Minute}
	if o := callService(ctx, client, gw.URL, other.ServiceToken, "list_customers", map[string]any{"limit": 5}); !o.ok() {
		t.Errorf("another site's call while a stream is stalled: %v", o)
	}
}
