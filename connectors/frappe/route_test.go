package frappe

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// TestTracedRequestsNameTheRouteNotTheRecord: the span of each request to
// the ERP carried its path (url.path), which names the document the call
// asked for. A traced call's requests carry the route as the connector
// names it, the document's name replaced; nothing in a span names it.
func TestTracedRequestsNameTheRouteNotTheRecord(t *testing.T) {
	inv := firstDoc(t, "Sales Invoice", func(*frappetest.Doc) bool { return true })
	exp := tracetest.NewInMemoryExporter()
	p := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, root := p.Tracer("test").Start(ctx, "tools/call")
	// As the engine does for a traced call of this connector's tools.
	ctx = outbound.WithRouteShape(ctx, New().RouteShape)
	raw, _ := json.Marshal(map[string]any{"doctype": "Sales Invoice", "name": inv.Name})
	if _, err := toolByName(t, "get_document").Handler(ctx, invocation{role: allCompanies}.newCall(t, raw)); err != nil {
		t.Fatal(err)
	}
	root.End()
	const want = "/api/resource/Sales%20Invoice/{name}"
	found := false
	for _, s := range exp.GetSpans() {
		if s.Name != "erp request" {
			continue
		}
		for _, kv := range s.Attributes {
			v := kv.Value.Emit()
			if kv.Key == "url.template" && v == want {
				found = true
			}
			if strings.Contains(v, inv.Name) || kv.Key == "url.path" {
				t.Errorf("span attribute %s = %q names the document", kv.Key, v)
			}
		}
	}
	if !found {
		t.Errorf("no erp request span with url.template %s: %v", want, exp.GetSpans())
	}
}

// TestRouteShapes: the route of each kind of path erpgate sends to Frappe
// keeps the doctype and the method, and replaces document names.
func TestRouteShapes(t *testing.T) {
	for path, want := range map[string]string{
		"/api/resource/Customer":                       "/api/resource/Customer",
		"/api/resource/Sales%20Invoice/ACC-SINV-00001": "/api/resource/Sales%20Invoice/{name}",
		"/api/resource/User/jane%40example.com":        "/api/resource/User/{name}",
		"/api/resource/jane%40example.com":             "/api/resource/{doctype}",
		"/api/method/frappe.desk.query_report.run":     "/api/method/frappe.desk.query_report.run",
		"/api/method/frappe.client.submit":             "/api/method/frappe.client.submit",
		"/api/method/jane%40example.com":               "/api/method/{method}",
		"/app/sales-invoice/ACC-SINV-00001":            "",
	} {
		if got := New().RouteShape(path); got != want {
			t.Errorf("RouteShape(%s) = %q, want %q", path, got, want)
		}
	}
}
