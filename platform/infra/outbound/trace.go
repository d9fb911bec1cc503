package outbound

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation scope of ERP request spans.
const tracerName = "github.com/erpgate/erpgate/platform/infra/outbound"

// startSpan starts an "erp request" span for req when its context carries
// a recording span (a traced tool call): the method, host and path, never
// the query string (it carries the call's filters) or a header.
func startSpan(ctx context.Context, req *http.Request) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, "erp request",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname()),
			attribute.String("url.path", req.URL.Path)))
}

// endSpan ends an ERP request's span with its status, or its failure.
func endSpan(span trace.Span, status int, err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "no answer from the ERP")
	default:
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End()
}
