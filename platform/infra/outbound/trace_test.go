package outbound

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/erpgate/erpgate/platform/infra/tracing"
)

// tracedContext is a context whose span records, as a traced tool
// call's does, with the spans it makes exported to the returned exporter.
func tracedContext(t *testing.T) (context.Context, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.Start(context.Background(), tracing.Options{Exporter: exp, Sync: true, SamplePercent: 100, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	ctx, span := p.Tracer().Start(context.Background(), "tools/call")
	t.Cleanup(func() { span.End() })
	return ctx, exp
}

// erpSpanAttributes sends a GET of path (with its query) through a
// client of an ERP under the virtual directory /erp, in ctx, and returns
// the attributes of the one "erp request" span it made.
func erpSpanAttributes(t *testing.T, ctx context.Context, exp *tracetest.InMemoryExporter, path string) map[string]string {
	t.Helper()
	erp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{}`)
	}))
	defer erp.Close()
	exp.Reset()
	c := NewFactory(DefaultOptions()).Client(siteFor(t, erp.URL+"/erp"), bearer)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, erp.URL+"/erp"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	drainAndClose(resp)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "erp request" {
		t.Fatalf("spans %v, want one erp request", spans)
	}
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	return attrs
}

// TestERPRequestSpanNamesNoRecord: an ERP request's span carried the
// path as sent (url.path), which names the document or the user the call
// asked for. Without a connector's route shape it carries none of the
// path beyond the site's own directory; the method, host and status stay.
func TestERPRequestSpanNamesNoRecord(t *testing.T) {
	ctx, exp := tracedContext(t)
	attrs := erpSpanAttributes(t, ctx, exp, "/api/resource/Customer/jane.doe%40example.com?filters=%5B%22Acme%22%5D")
	if attrs["url.template"] != "/erp/{path}" {
		t.Errorf("url.template %q, want /erp/{path}", attrs["url.template"])
	}
	checkNoRecord(t, attrs)
}

// checkNoRecord fails when a span attribute names the record, the e-mail
// address or the query the request sent, or lacks the method, host or
// status.
func checkNoRecord(t *testing.T, attrs map[string]string) {
	t.Helper()
	for k, v := range attrs {
		for _, leak := range []string{"jane", "example.com", "Acme", "filters"} {
			if strings.Contains(v, leak) {
				t.Errorf("attribute %s = %q names %q", k, v, leak)
			}
		}
	}
	if attrs["http.request.method"] != "GET" || attrs["server.address"] != "127.0.0.1" || attrs["http.response.status_code"] != "200" {
		t.Errorf("attributes %v, want the method, host and status", attrs)
	}
}

// TestERPRequestSpanCarriesTheConnectorsRoute: with a connector's route
// shape in the context (WithRouteShape, as the engine sets it), the span
// carries the route it names for the path below the site's directory; a
// path it does not know is carried as no path at all.
func TestERPRequestSpanCarriesTheConnectorsRoute(t *testing.T) {
	ctx, exp := tracedContext(t)
	var asked []string
	ctx = WithRouteShape(ctx, func(p string) string {
		asked = append(asked, p)
		if strings.HasPrefix(p, "/api/resource/Customer/") {
			return "/api/resource/Customer/{name}"
		}
		return ""
	})
	attrs := erpSpanAttributes(t, ctx, exp, "/api/resource/Customer/jane.doe%40example.com?filters=%5B%22Acme%22%5D")
	if attrs["url.template"] != "/erp/api/resource/Customer/{name}" {
		t.Errorf("url.template %q, want /erp/api/resource/Customer/{name}", attrs["url.template"])
	}
	checkNoRecord(t, attrs)
	if len(asked) != 1 || asked[0] != "/api/resource/Customer/jane.doe%40example.com" {
		t.Errorf("the route shape was asked about %q, want the escaped path below /erp without its query", asked)
	}
	attrs = erpSpanAttributes(t, ctx, exp, "/private/files/jane.doe%40example.com.pdf")
	if attrs["url.template"] != "/erp/{path}" {
		t.Errorf("url.template %q for a path the connector does not know, want /erp/{path}", attrs["url.template"])
	}
	checkNoRecord(t, attrs)
}
