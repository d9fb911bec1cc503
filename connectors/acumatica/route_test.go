package acumatica

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// TestTracedRequestsNameTheRouteNotTheRecord: the span of each request to
// the ERP carried its path (url.path), which names the record the call
// asked for: the order's type and number here. A traced call's requests
// carry the route as the connector names it, the keys replaced, under the
// instance's virtual directory; nothing in a span names the record.
func TestTracedRequestsNameTheRouteNotTheRecord(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{PathPrefix: "/AcumaticaERP"}})
	so := h.sim.Data().Records("SalesOrder")[10]
	exp := tracetest.NewInMemoryExporter()
	p := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	ctx, root := p.Tracer("test").Start(context.Background(), "tools/call")
	// As the engine does for a traced call of this connector's tools.
	ctx = outbound.WithRouteShape(ctx, h.conn.RouteShape)
	raw, _ := json.Marshal(map[string]any{"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr")})
	if _, err := h.tools["acumatica_get_sales_order"].Handler(ctx, h.newCall(kindFull, raw)); err != nil {
		t.Fatal(err)
	}
	root.End()
	want := "/AcumaticaERP/entity/Default/24.200.001/SalesOrder/{key}/{key}"
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
			if strings.Contains(v, so.String("OrderNbr")) || kv.Key == "url.path" {
				t.Errorf("span attribute %s = %q names the order", kv.Key, v)
			}
		}
	}
	if !found {
		t.Errorf("no erp request span with url.template %s: %v", want, exp.GetSpans())
	}
}

// TestRouteShapes: the route of each kind of path erpgate sends to
// Acumatica keeps the endpoint, version, entity and the service's own
// words, and replaces keys, the tenant and an inquiry's parameters.
func TestRouteShapes(t *testing.T) {
	for path, want := range map[string]string{
		"/entity":                               "/entity",
		"/entity/Default/24.200.001/SalesOrder": "/entity/Default/24.200.001/SalesOrder",
		"/entity/Default/24.200.001/SalesOrder/SO/000123":  "/entity/Default/24.200.001/SalesOrder/{key}/{key}",
		"/entity/Default/25.200.001/Contact/jane%40x.test": "/entity/Default/25.200.001/Contact/{key}",
		"/entity/Default/24.200.001/Customer/$adHocSchema": "/entity/Default/24.200.001/Customer/$adHocSchema",
		"/entity/Default/24.200.001/swagger.json":          "/entity/Default/24.200.001/swagger.json",
		"/entity/Default/24.200.001/Jane%20Doe":            "/entity/Default/24.200.001/{entity}",
		"/t/Acme%20Ltd/api/odata/gi":                       "/t/{tenant}/api/odata/gi",
		"/t/Acme/api/odata/gi/$metadata":                   "/t/{tenant}/api/odata/gi/$metadata",
		"/t/Acme/api/odata/gi/SalesByCustomer":             "/t/{tenant}/api/odata/gi/SalesByCustomer",
		"/t/Acme/api/odata/gi/SalesFor(Customer='ACME')":   "/t/{tenant}/api/odata/gi/{inquiry}",
		"/identity/connect/token":                          "/identity/connect/token",
		"/somewhere/else":                                  "",
	} {
		if got := New(Options{}).RouteShape(path); got != want {
			t.Errorf("RouteShape(%s) = %q, want %q", path, got, want)
		}
	}
}
