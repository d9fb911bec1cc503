package mcpengine

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/tracing"
)

// allowLimiter admits every call.
type allowLimiter struct{}

func (allowLimiter) Acquire(context.Context, string, string) (func(), error) { return func() {}, nil }

// refuseLimiter refuses every call.
type refuseLimiter struct{}

func (refuseLimiter) Acquire(context.Context, string, string) (func(), error) {
	return nil, toolerr.New(toolerr.RateLimited, "too many calls")
}

// tracedFixture is a fixture whose engine traces into an in-memory
// exporter, through platform/infra/tracing as erpgate wires it.
func tracedFixture(t *testing.T, limiter Limiter) (*fixture, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	p, err := tracing.Start(context.Background(), tracing.Options{Exporter: exp, Sync: true, SamplePercent: 100, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	f := newFixtureWith(t, false, func(o *Options) { o.Tracer = p.Tracer(); o.Limiter = limiter })
	return f, exp
}

// spanTree indexes spans by name, each name once.
func spanTree(t *testing.T, spans tracetest.SpanStubs) (root tracetest.SpanStub, children []tracetest.SpanStub) {
	t.Helper()
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if !s.Parent.IsValid() || s.Parent.IsRemote() {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans, want 1: %v", len(roots), names(spans))
	}
	root = roots[0]
	for _, s := range spans {
		if s.SpanContext.SpanID() == root.SpanContext.SpanID() {
			continue
		}
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %q is in another trace", s.Name)
		}
		if s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("span %q is not a child of the root span", s.Name)
		}
		children = append(children, s)
	}
	return root, children
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func TestToolCallIsOneTrace(t *testing.T) {
	f, exp := tracedFixture(t, allowLimiter{})
	// "pause" asks the ERP twice; the direct path answers it.
	resp, body := postPlainCall(t, f.url, "pause", `{}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "paused") {
		t.Fatalf("pause: %s %s", resp.Status, body)
	}
	root, children := spanTree(t, exp.GetSpans())
	if root.Name != "tools/call pause" {
		t.Errorf("root span %q, want \"tools/call pause\"", root.Name)
	}
	var got []string
	for _, c := range children {
		got = append(got, c.Name)
	}
	want := []string{"admission", "limits", "erp request", "erp request", "redaction", "reply"}
	if !slices.Equal(got, want) {
		t.Errorf("child spans %v, want %v in that order", got, want)
	}
	for _, c := range children {
		if c.Name != "erp request" {
			continue
		}
		attrs := map[string]string{}
		for _, kv := range c.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		// The route as the connector names it (fakeERP.RouteShape), never
		// the path as sent, which may name a record.
		if _, ok := attrs["url.path"]; ok || attrs["url.template"] != "/pause" || attrs["http.response.status_code"] != "200" || attrs["http.request.method"] != "GET" {
			t.Errorf("erp request span attributes %v", attrs)
		}
	}
	for _, kv := range root.Attributes {
		if kv.Key == "erpgate.outcome" && kv.Value.AsString() != "success" {
			t.Errorf("root outcome %s", kv.Value.AsString())
		}
	}
	if root.Status.Code == codes.Error {
		t.Errorf("root span failed: %v", root.Status)
	}
}

func TestTraceContinuesTheCallersTrace(t *testing.T) {
	f, exp := tracedFixture(t, allowLimiter{})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(mcp.HeaderProtocolVersion, "2025-06-18")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	root, _ := spanTree(t, exp.GetSpans())
	if root.SpanContext.TraceID().String() != traceID || root.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("root span in trace %s under %s, want the caller's", root.SpanContext.TraceID(), root.Parent.SpanID())
	}
}

func TestRefusedCallTraceEndsAtTheLimits(t *testing.T) {
	f, exp := tracedFixture(t, refuseLimiter{})
	postPlainCall(t, f.url, "pause", `{}`)
	root, children := spanTree(t, exp.GetSpans())
	var got []string
	for _, c := range children {
		got = append(got, c.Name)
		if c.Name == "limits" && (c.Status.Code != codes.Error || c.Status.Description != string(toolerr.RateLimited)) {
			t.Errorf("limits span status %v, want an error RATE_LIMITED", c.Status)
		}
	}
	if want := []string{"admission", "limits", "reply"}; !slices.Equal(got, want) {
		t.Errorf("child spans %v, want %v", got, want)
	}
	if root.Status.Code != codes.Error || root.Status.Description != string(toolerr.RateLimited) {
		t.Errorf("root span status %v, want RATE_LIMITED", root.Status)
	}
}

// A 2026-07-28 call goes through mcp-go's transport rather than the
// engine's direct reply; it is one trace with the same steps.
func TestModernToolCallIsOneTrace(t *testing.T) {
	f, exp := tracedFixture(t, allowLimiter{})
	resp, body := postModern(t, f.url, "tools/call", `{"name":"pause","arguments":{},`+modernMeta+`}`, map[string]string{mcp.HeaderName: "pause"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "paused") {
		t.Fatalf("pause: %s %s", resp.Status, body)
	}
	root, children := spanTree(t, exp.GetSpans())
	if root.Name != "tools/call pause" {
		t.Errorf("root span %q", root.Name)
	}
	var got []string
	for _, c := range children {
		got = append(got, c.Name)
	}
	if want := []string{"admission", "limits", "erp request", "erp request", "redaction", "reply"}; !slices.Equal(got, want) {
		t.Errorf("child spans %v, want %v", got, want)
	}
}
