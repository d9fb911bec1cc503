package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// partition forwards connections to a database. Cut makes every open
// connection silent for good (no byte either way, no error: a NAT or load
// balancer forgot the flows) and holds new connections; Mend lets new
// connections through again, while the silent ones stay silent.
type partition struct {
	URL string

	mu      sync.Mutex
	cut     bool
	mended  chan struct{}
	silence []chan struct{}
	conns   []net.Conn
}

func newPartition(t *testing.T, dbURL string) *partition {
	p := &partition{mended: make(chan struct{})}
	p.URL = pgtest.Forward(t, dbURL, func(client, server net.Conn) {
		p.mu.Lock()
		cut, mended := p.cut, p.mended
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		go func() {
			if cut {
				<-mended
			}
			silent := make(chan struct{})
			p.mu.Lock()
			p.silence = append(p.silence, silent)
			p.mu.Unlock()
			go forwardUntilSilent(server, client, silent)
			go forwardUntilSilent(client, server, silent)
		}()
	})
	return p
}

func forwardUntilSilent(dst, src net.Conn, silent <-chan struct{}) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-silent:
			n = 0
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *partition) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, s := range p.silence {
		close(s)
	}
	p.silence = nil
}

// closeAll closes every connection it forwarded.
func (p *partition) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *partition) Mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	close(p.mended)
	p.mended = make(chan struct{})
}

// TestSettingsPollSurvivesSilentConnections: replica B's connections to
// Postgres all go silent (a network partition that drops the flows
// without a reset), and while B's new connections are held, the operator
// changes a setting through replica A. B's listener misses that
// notification; the 500 ms poll of the live settings is what brings the
// change, once B can connect again. The poll must not stay stuck on a
// silent pooled connection (for as long as the kernel takes to give up on
// it, a quarter of an hour), leaving B on the old setting.
func TestSettingsPollSurvivesSilentConnections(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	a := startGateway(t, db, nil)
	cut := newPartition(t, db)
	b := startGateway(t, cut.URL, map[string]string{"ERPGATE_ADMIN_TOKEN": a.AdminToken, "ERPGATE_ENCRYPTION_KEYS": a.Keys})
	// Before B shuts down, its silent connections are closed.
	t.Cleanup(cut.closeAll)
	if got := b.App.live.Current().Deployment.MaxRecords; got == 7 {
		t.Fatalf("max_records is 7 before the change")
	}

	cut.Cut()
	if err := a.admin.do(ctx, http.MethodPut, "/settings/max_records", map[string]any{"value": 7}, nil); err != nil {
		t.Fatal(err)
	}
	cut.Mend()
	deadline := time.Now().Add(20 * time.Second)
	for b.App.live.Current().Deployment.MaxRecords != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("replica B still has max_records %d, 20 s after the change", b.App.live.Current().Deployment.MaxRecords)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
