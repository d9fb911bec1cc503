// Package tracing sends OpenTelemetry traces of MCP requests to an OTLP
// collector over HTTP (issue 17). Off unless an endpoint is configured;
// the engine then starts no span at all (platform/front/mcpengine, trace.go).
package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure Start.
type Options struct {
	// Endpoint is the collector's base URL (http://otel-collector:4318);
	// spans go to its /v1/traces.
	Endpoint string
	// SamplePercent is the share of requests traced that arrive without a
	// sampled trace context (0 to 100).
	SamplePercent int
	// Version is erpgate's, recorded as service.version.
	Version string
	// Exporter replaces the OTLP exporter (tests: tracetest's in-memory
	// exporter); Endpoint is then not used.
	Exporter sdktrace.SpanExporter
	// Sync exports each span as it ends instead of in batches (tests).
	Sync bool
}

// Provider is a running tracer provider.
type Provider struct {
	tp *sdktrace.TracerProvider
}

// Start builds a tracer provider exporting to opts.Endpoint. Nothing is
// sent until a span ends; an unreachable collector loses spans, never a
// request.
func Start(ctx context.Context, opts Options) (*Provider, error) {
	exp := opts.Exporter
	if exp == nil {
		var err error
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(opts.Endpoint+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", opts.Endpoint, err)
		}
	}
	ratio := float64(opts.SamplePercent) / 100
	var export sdktrace.TracerProviderOption
	if opts.Sync {
		export = sdktrace.WithSyncer(exp)
	} else {
		export = sdktrace.WithBatcher(exp)
	}
	tp := sdktrace.NewTracerProvider(export,
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "erpgate"),
			attribute.String("service.version", opts.Version))))
	return &Provider{tp: tp}, nil
}

// Tracer is the tracer MCP requests' root spans come from.
func (p *Provider) Tracer() trace.Tracer {
	return p.tp.Tracer("github.com/erpgate/erpgate")
}

// Shutdown sends the spans still buffered and stops the provider.
func (p *Provider) Shutdown(ctx context.Context) error {
	return p.tp.Shutdown(ctx)
}
