package mcpengine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// TestLiveSettingsChangeWhatASiteOffers: SetLive changes, for the next
// request and without a restart, which tools a site lists and may call
// (a tool list, the read-only switch, the write tools it enables: none by
// default), the redaction of its results (its own patterns on top of the
// deployment's), and leaves other sites alone.
func TestLiveSettingsChangeWhatASiteOffers(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"nickname":"Bibi","bonus":"7000","city":"Lyon"}`))
	}))
	t.Cleanup(upstream.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(effectERP{})
	base, _ := url.Parse(upstream.URL)
	locked := connector.Site{ID: uuid.New(), Slug: "locked", Kind: "effecterp", BaseURL: base}
	open := connector.Site{ID: uuid.New(), Slug: "open", Kind: "effecterp", BaseURL: base}
	opts := Options{Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{}, Budget: 30 * time.Second,
		Redaction: redact.Rules{Add: []string{"bonus"}}}
	withApprovals(t, &opts, locked)
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	serve := func(site connector.Site) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A person: a service token is offered no write tool unless
			// the site lets service tokens write (TestServiceCatalogueIsReadOnlyUnlessServiceWritesAreOn).
			e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "oauth", Subject: jane}})
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	lockedCS, openCS := (&fixture{url: serve(locked)}).session(t), (&fixture{url: serve(open)}).session(t)
	listed := func(t *testing.T, which string) []string {
		cs := lockedCS
		if which == "open" {
			cs = openCS
		}
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range list.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	reads := []string{"read_by_get", "read_by_post"}
	if got := listed(t, "locked"); !slices.Equal(got, reads) {
		t.Fatalf("before (writes are off by default): %v", got)
	}

	e.SetLive(Live{Redaction: redact.Rules{Add: []string{"bonus"}}, Sites: map[uuid.UUID]SiteLive{
		locked.ID: {ReadOnly: true, Tools: []string{"read_by_get", "write"}, WriteTools: []string{"write_by_get"},
			Redaction: redact.Rules{Add: []string{"nickname"}}},
	}})
	if got := listed(t, "locked"); !slices.Equal(got, []string{"read_by_get"}) {
		t.Errorf("read-only with read_by_get and the write group: %v", got)
	}
	if got := listed(t, "open"); !slices.Equal(got, reads) {
		t.Errorf("another site: %v", got)
	}
	for _, tool := range []string{"write_by_get", "read_by_post", "destroy_by_get"} {
		res, m := call(t, lockedCS, tool, nil)
		mu.Lock()
		n := hits["/"+tool]
		mu.Unlock()
		if !res.IsError || errCode(m) != "PERMISSION_DENIED" || n != 0 {
			t.Errorf("%s on the locked site: isError=%v %v, %d requests to the ERP", tool, res.IsError, m, n)
		}
	}
	_, m := call(t, lockedCS, "read_by_get", nil)
	v, _ := m["value"].(map[string]any)
	if v["nickname"] != redact.Placeholder || v["bonus"] != redact.Placeholder || v["city"] != "Lyon" {
		t.Errorf("the locked site's result: %v", m)
	}
	_, m = call(t, openCS, "read_by_get", nil)
	v, _ = m["value"].(map[string]any)
	if v["nickname"] != "Bibi" || v["bonus"] != redact.Placeholder {
		t.Errorf("the open site's result: %v", m)
	}

	// Read-only alone: the write tools go, the read tools stay.
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{locked.ID: {ReadOnly: true, WriteTools: []string{"write_by_get"}}}})
	if got := listed(t, "locked"); !slices.Equal(got, reads) {
		t.Errorf("read-only: %v", got)
	}
	// Write tools enabled one by one; the tool list still applies.
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{locked.ID: {WriteTools: []string{"write_by_get", "destroy_by_get"}}}})
	if got := listed(t, "locked"); !slices.Equal(got, []string{"destroy_by_get", "read_by_get", "read_by_post", "write_by_get"}) {
		t.Errorf("two write tools enabled: %v", got)
	}
	e.SetLive(Live{Sites: map[uuid.UUID]SiteLive{locked.ID: {Tools: []string{"read", "write"}, WriteTools: []string{"write_by_get", "destroy_by_get"}}}})
	if got := listed(t, "locked"); !slices.Equal(got, []string{"read_by_get", "read_by_post", "write_by_get"}) {
		t.Errorf("the destructive group not offered: %v", got)
	}
	_, m = call(t, openCS, "read_by_get", nil)
	if v, _ := m["value"].(map[string]any); v["bonus"] != "7000" {
		t.Errorf("the deployment's redaction was dropped, yet bonus is %v", v["bonus"])
	}
}
