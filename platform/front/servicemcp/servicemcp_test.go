package servicemcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/front/mcpengine"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/platform/store/usage"
)

type usageSink struct {
	mu     sync.Mutex
	events []usage.Event
}

func (s *usageSink) Record(e usage.Event) { s.mu.Lock(); s.events = append(s.events, e); s.mu.Unlock() }

// serviceDoor serves /service/mcp over a real engine for two sites, acme
// (from setup) and globex, and returns its URL and each site's token.
func serviceDoor(t *testing.T) (endpoint, acme, globex string, events *usageSink) {
	t.Helper()
	store, reg, _, acme := setup(t)
	ctx := context.Background()
	other, err := store.CreateSite(ctx, sites.NewSite{Slug: "globex", Kind: "stuberp", DisplayName: "Globex", BaseURL: "https://erp.globex.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutConnection(ctx, other.ID, sites.ConnectionAPIToken, "bot", map[string]secrets.Secret{"key": "g-1"}); err != nil {
		t.Fatal(err)
	}
	_, tok, err := store.IssueServiceToken(ctx, other.ID, "t")
	if err != nil {
		t.Fatal(err)
	}
	events = &usageSink{}
	engine, err := mcpengine.New(mcpengine.Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: events, Budget: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Resolver: NewResolver(store, reg, nil, time.Minute), Engine: engine}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, acme, tok.Reveal(), events
}

// post sends tools/list with the given headers and returns the status and body.
func post(t *testing.T, endpoint string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	for k, v := range header {
		for _, one := range strings.Split(v, "\n") { // one header line each
			req.Header.Add(k, one)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A request that carries two different tokens, one in each header, is
// refused: which site (and whose credential) it would run as must not
// depend on which header erpgate happens to read first (RFC 6750 §2: one
// method per request). The same token in both headers is one token.
func TestServiceTokenInBothHeadersMustAgree(t *testing.T) {
	endpoint, acme, globex, events := serviceDoor(t)
	for name, h := range map[string]map[string]string{
		"dedicated header":         {HeaderServiceToken: acme},
		"bearer":                   {"Authorization": "Bearer " + acme},
		"the same token in both":   {HeaderServiceToken: acme, "Authorization": "Bearer " + acme},
		"another scheme beside it": {HeaderServiceToken: acme, "Authorization": "Basic cHJveHk6cGFzcw=="},
	} {
		if status, body := post(t, endpoint, h); status != http.StatusOK {
			t.Errorf("%s: HTTP %d %s", name, status, body)
		}
	}
	for name, h := range map[string]map[string]string{
		"a valid token of another site as bearer": {HeaderServiceToken: acme, "Authorization": "Bearer " + globex},
		"an unknown token as bearer":              {HeaderServiceToken: acme, "Authorization": "Bearer egs_other"},
		"two lines of the dedicated header":       {HeaderServiceToken: acme + "\n" + globex},
		"two bearer lines":                        {"Authorization": "Bearer " + acme + "\nBearer " + globex},
	} {
		status, body := post(t, endpoint, h)
		if status != http.StatusBadRequest || !strings.Contains(body, "two different") {
			t.Errorf("%s: HTTP %d %s; want 400 naming the two different tokens", name, status, body)
		}
		if strings.Contains(body, acme) || strings.Contains(body, globex) {
			t.Errorf("%s: the answer echoes a token", name)
		}
	}
	// The usage events of the calls served name the token by its id only.
	events.mu.Lock()
	defer events.mu.Unlock()
	if len(events.events) == 0 {
		t.Fatal("no usage event was recorded")
	}
	for _, e := range events.events {
		if text := fmt.Sprintf("%+v", e); strings.Contains(text, acme) || strings.Contains(text, globex) || e.AuthType != "service_token" {
			t.Errorf("usage event %s", text)
		}
	}
}
