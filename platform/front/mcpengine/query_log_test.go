package mcpengine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// filterERP is fakeERP with one tool that asks the ERP with the call's
// filter in the query, as an inquiry over OData does, and passes the
// client's error on as connectors do.
type filterERP struct{ fakeERP }

func (filterERP) Tools() []connector.Tool {
	return []connector.Tool{{
		Name: "inquiry", Description: "Test tool.", Effect: connector.Read,
		Input:  schema.Object(schema.Prop("customer", schema.String("")).Required()),
		Output: schema.Object(schema.Prop("value", schema.Any(""))),
		Handler: func(ctx context.Context, c *connector.Call) (any, error) {
			var a struct {
				Customer string `json:"customer"`
			}
			if err := c.Decode(&a); err != nil {
				return nil, err
			}
			q := url.Values{"$filter": {"CustomerName eq '" + a.Customer + "'"}}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.Site.URL("/odata/gi/Customers", q), nil)
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return nil, err
			}
			_ = resp.Body.Close()
			return map[string]any{"value": "read"}, nil
		},
	}}
}

// TestInternalFailureLogNamesNoQuery: a tool call that fails inside
// erpgate (here the credential could not be had: its store failed) is
// logged with its cause, and an *http.Client's error names the request's
// URL with its query, which carries the call's arguments (an inquiry's
// $filter values). The log names the URL by scheme, host and path only.
func TestInternalFailureLogNamesNoQuery(t *testing.T) {
	const marker = "Zq-Secret-Customer-Name"
	erp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the ERP was asked %s; the credential failed first", r.URL)
	}))
	t.Cleanup(erp.Close)
	reg := connector.NewRegistry()
	reg.MustRegister(filterERP{})
	core, logs := observer.New(zap.DebugLevel)
	e, err := New(Options{
		Registry: reg, Outbound: outbound.NewFactory(outbound.DefaultOptions()), Usage: &sink{},
		Logger: zap.New(core), Budget: 5 * time.Second, MaxResultBytes: 4096,
		AllowedOrigins: []string{"https://gw.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse(erp.URL)
	site := connector.Site{ID: uuid.New(), Slug: "demo", Kind: "fakeerp", BaseURL: base}
	failing := connector.AuthorizerFunc(func(*http.Request) error {
		return errors.New("credential store: connection refused")
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.ServeMCP(w, r, Session{Site: site, Principal: connector.Principal{AuthType: "service_token"}, Authorizer: failing})
	}))
	t.Cleanup(srv.Close)
	f := &fixture{engine: e, site: site, url: srv.URL}

	_, m := call(t, f.session(t), "inquiry", map[string]any{"customer": marker})
	if code := errCode(m); code != "INTERNAL" {
		t.Fatalf("error code %q, want INTERNAL: %v", code, m)
	}
	failed := logs.FilterMessage("tool call failed").All()
	if len(failed) != 1 {
		t.Fatalf("%d lines say the tool call failed, want 1", len(failed))
	}
	for _, entry := range logs.All() {
		blob, _ := json.Marshal(entry.ContextMap())
		if strings.Contains(string(blob), marker) || strings.Contains(string(blob), "filter") {
			t.Errorf("log line %q carries the request's query: %s", entry.Message, blob)
		}
	}
	if text, _ := failed[0].ContextMap()["error"].(string); !strings.Contains(text, base.Host+"/odata/gi/Customers") || !strings.Contains(text, "credential store") {
		t.Errorf("the failure's line does not name the ERP address and its cause: %q", text)
	}
}
