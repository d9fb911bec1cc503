package outbound

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/netguard"
)

// TestAddressPolicyGuardsEveryDial: with the production policy the
// transport never connects to a loopback ERP, whatever name reaches it
// (a DNS rebinding after registration looks the same: the check is on the
// dialled address), unless the operator listed the host. The refusal is
// not retried and tells the model the site is misconfigured, not where
// the name points.
func TestAddressPolicyGuardsEveryDial(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	guarded := NewFactory(Options{Retry: true, AddressPolicy: netguard.NewPolicy([]string{"erp.listed.test"})})
	for _, base := range []string{srv.URL, "http://localhost:" + port} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/x", nil)
		_, err := guarded.Client(siteFor(t, base), bearer).Do(req)
		if !errors.Is(err, netguard.ErrForbiddenAddress) || codeOf(err) != toolerr.UpstreamUnavailable {
			t.Errorf("GET %s: err = %v, want a refused address", base, err)
		}
		var te *toolerr.Error
		if errors.As(err, &te) && strings.Contains(base, "localhost") && strings.Contains(te.Message, "127.0.0.1") {
			t.Errorf("the model is told the resolved address: %q", te.Message)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback ERP got %d requests", n)
	}

	// Listed without a port, the host is exempt on 443 only.
	bare := NewFactory(Options{AddressPolicy: netguard.NewPolicy([]string{"localhost"})})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost:"+port+"/api/x", nil)
	_, err := bare.Client(siteFor(t, "http://localhost:"+port), bearer).Do(req)
	if te := (*toolerr.Error)(nil); !errors.As(err, &te) || !strings.Contains(te.Message, "list it (localhost:"+port+")") {
		t.Errorf("GET of another port of a host listed without one: %v", err)
	}
	listed := NewFactory(Options{AddressPolicy: netguard.NewPolicy([]string{"localhost:" + port})})
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost:"+port+"/api/x", nil)
	resp, err := listed.Client(siteFor(t, "http://localhost:"+port), bearer).Do(req)
	if err != nil {
		t.Fatalf("GET of a listed host: %v", err)
	}
	resp.Body.Close()
	if n := hits.Load(); n != 1 {
		t.Errorf("the listed ERP got %d requests, want 1", n)
	}
}
