package mcpengine

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Tracing (issue 17): with Options.Tracer set, an MCP request is one
// trace. Its root span ("mcp <method>", renamed "tools/call <tool>" for a
// tool call) has a child for each step: "admission" (the door, the body
// read included), "limits" (the call limits), one "erp request" per
// request to the ERP (made by platform/infra/outbound from the context),
// "redaction" (encoding, redaction and the size bound of the result) and
// "reply" (writing it). Without a tracer none of this runs: no span, no
// context, no allocation.

// traceContext extracts a caller's W3C trace context, so that a traced
// client's trace continues here.
var traceContext = propagation.TraceContext{}

// startRoot starts the request's root span, or returns r unchanged when
// tracing is off.
func (e *Engine) startRoot(r *http.Request, s Session) (*http.Request, trace.Span) {
	if e.opts.Tracer == nil {
		return r, nil
	}
	ctx := traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := e.opts.Tracer.Start(ctx, "mcp request", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("erpgate.site_kind", s.Site.Kind),
			attribute.String("erpgate.site", s.Site.Slug),
			attribute.String("http.request.method", r.Method)))
	return r.WithContext(ctx), span
}

// startSpan starts a child of the span in ctx when the request is traced.
func startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(tracerName).Start(ctx, name)
}

// tracerName names erpgate's spans' instrumentation scope.
const tracerName = "github.com/erpgate/erpgate/platform/front/mcpengine"

// endSpan ends span (nil when untraced), marking it failed by err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		// The stable code, never the error's text, which may quote the
		// ERP.
		span.SetStatus(codes.Error, string(toolerr.Classify(err).Code))
	}
	span.End()
}

// finishRoot names the root span after what the request turned out to be
// and records its outcome.
func finishRoot(span trace.Span, st *requestState) {
	if span == nil {
		return
	}
	if st != nil {
		tool, outcome, code, _ := st.snapshot()
		if st.method != "" {
			name := st.method
			if !knownMethod(name) {
				name = "unknown" // a client's own text names no span
			}
			if tool != "" {
				name += " " + tool
				span.SetAttributes(attribute.String("erpgate.tool", tool))
			}
			span.SetName(name)
			span.SetAttributes(attribute.String("rpc.method", name))
		}
		if outcome != "" {
			span.SetAttributes(attribute.String("erpgate.outcome", string(outcome)))
		}
		if code != "" {
			span.SetAttributes(attribute.String("erpgate.error_code", code))
			span.SetStatus(codes.Error, code)
		}
	}
	span.End()
}
