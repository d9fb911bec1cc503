package pgtest

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Silencer forwards connections to a database, so that a test can make
// some or all of them go silent: they stay open but carry no byte either
// way, as an idle flow does once a NAT or load balancer has forgotten it.
// Connections opened later are forwarded, or held while the silencer
// holds new ones (a partition).
type Silencer struct {
	// URL is the database's URL through the silencer.
	URL string

	mu    sync.Mutex
	conns []*silencedConn
	// held, while not nil, keeps new connections waiting until it closes.
	held chan struct{}
}

type silencedConn struct {
	client, server net.Conn
	listening      atomic.Bool // it sent LISTEN
	silent         atomic.Bool
}

// NewSilencer forwards a local port to the server of dbURL until the test
// ends.
func NewSilencer(t testing.TB, dbURL string) *Silencer {
	t.Helper()
	s := &Silencer{}
	s.URL = Forward(t, dbURL, func(client, server net.Conn) {
		c := &silencedConn{client: client, server: server}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		held := s.held
		s.mu.Unlock()
		go func() {
			if held != nil {
				<-held
			}
			go c.forward(server, client, true)
			c.forward(client, server, false)
		}()
	})
	return s
}

// Forward listens on a local port until the test ends, connects each
// connection it accepts to the server of dbURL, and hands both ends to
// serve, which must not block. It returns dbURL with the local port in
// the server's place. Connections still open when the test ends are
// closed.
func Forward(t testing.TB, dbURL string, serve func(client, server net.Conn)) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		open []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			open = append(open, client, server)
			mu.Unlock()
			serve(client, server)
		}
	}()
	u.Host = ln.Addr().String()
	return u.String()
}

// SilenceListening silences every open connection that has sent LISTEN,
// and returns how many it silenced.
func (s *Silencer) SilenceListening() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		if c.listening.Load() && !c.silent.Swap(true) {
			n++
		}
	}
	return n
}

// SilenceAll silences every open connection, and returns how many it
// silenced.
func (s *Silencer) SilenceAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		if !c.silent.Swap(true) {
			n++
		}
	}
	return n
}

// Hold keeps the connections opened from now on waiting, unforwarded,
// until Release.
func (s *Silencer) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = make(chan struct{})
	}
}

// Release forwards the held connections and lets new ones through; the
// silenced ones stay silent.
func (s *Silencer) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		close(s.held)
		s.held = nil
	}
}

// CloseAll closes every connection it forwarded, now rather than when the
// test ends: a test whose gateway must stop before then (its shutdown
// would wait on a silent connection) registers it as a cleanup after
// starting the gateway.
func (s *Silencer) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.client.Close()
		c.server.Close()
	}
}

// forward copies src to dst until either closes; once the connection is
// silent it reads and drops what src sends.
func (c *silencedConn) forward(dst, src net.Conn, fromClient bool) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient && bytes.Contains(buf[:n], []byte("LISTEN ")) {
				c.listening.Store(true)
			}
			if !c.silent.Load() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
