package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// balancer is a load balancer without affinity in front of replicas: each
// request goes to the next replica in turn, so consecutive requests of
// one flow (a sign-in, a page's form, an MCP session) alternate.
type balancer struct {
	backends []*url.URL
	next     atomic.Uint64
	// served counts the requests each backend was given.
	served []atomic.Int64
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(b.next.Add(1)-1) % len(b.backends)
	b.served[i].Add(1)
	target := b.backends[i]
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// The replicas see the address the client used, as behind a
			// real load balancer.
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
	}
	p.ServeHTTP(w, r)
}

// startBalanced runs two replicas (erpgate instances in this process) on
// one database, with the same configuration, behind a balancer that
// alternates between them request by request; the gateway it returns is
// reached through the balancer (its App is the first replica's). env
// overrides the defaults, as for startGateway.
func startBalanced(t testing.TB, dbURL string, env map[string]string) *gateway {
	t.Helper()
	if dbURL == "" {
		dbURL = pgtest.NewDatabase(t)
	}
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := secrets.NewToken("ega")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.GenerateKeySpec("t1")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + front.Addr().String()
	logs := &syncBuffer{}
	lb := &balancer{served: make([]atomic.Int64, 2)}
	var apps []*App
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		app := serveReplica(t, ln, base, dbURL, admin.Value.Reveal(), keys, env, logs)
		u, _ := url.Parse("http://" + ln.Addr().String())
		lb.backends = append(lb.backends, u)
		apps = append(apps, app)
	}
	srv := &http.Server{Handler: lb, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(front) }()
	t.Cleanup(func() {
		_ = srv.Close()
		t.Logf("balancer: replica A served %d requests, B %d", lb.served[0].Load(), lb.served[1].Load())
	})
	return &gateway{
		URL: base, AdminToken: admin.Value.Reveal(), Keys: keys, DBURL: dbURL, App: apps[0], Logs: logs,
		admin: &adminClient{base: base, token: admin.Value.Reveal()},
	}
}
