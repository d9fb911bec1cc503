package outbound

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation scope of ERP request spans.
const tracerName = "github.com/erpgate/erpgate/platform/infra/outbound"

// routeShapeKey carries a connector's RouteShape in a traced call's
// context.
type routeShapeKey struct{}

// WithRouteShape returns ctx with shape, the connector's
// connector.RouteShaper, which names the route of each request made in it
// on its span. The engine sets it for traced calls only.
func WithRouteShape(ctx context.Context, shape func(escapedPath string) string) context.Context {
	return context.WithValue(ctx, routeShapeKey{}, shape)
}

// unknownRoute stands for a path no connector named.
const unknownRoute = "/{path}"

// routeTemplate is the route of req's path for its span: the site's
// directory (prefix, from its base URL) and the rest as the connector in
// ctx names it, never the path as sent, which can name a document or a
// user.
func routeTemplate(ctx context.Context, prefix string, req *http.Request) string {
	rest, ok := strings.CutPrefix(req.URL.EscapedPath(), prefix)
	if !ok || rest == "" || rest[0] != '/' {
		return prefix + unknownRoute
	}
	if shape, _ := ctx.Value(routeShapeKey{}).(func(string) string); shape != nil {
		if route := shape(rest); route != "" {
			return prefix + route
		}
	}
	return prefix + unknownRoute
}

// startSpan starts an "erp request" span for req when its context carries
// a recording span (a traced tool call): the method, host and route
// (routeTemplate), never the path as sent, the query string (it carries
// the call's filters) or a header. prefix is the site's directory.
func startSpan(ctx context.Context, prefix string, req *http.Request) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, "erp request",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname()),
			attribute.String("url.template", routeTemplate(ctx, prefix, req))))
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
