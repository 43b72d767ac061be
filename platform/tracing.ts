/**
 * OpenTelemetry tracing, on when OTEL_EXPORTER_OTLP_ENDPOINT is set: a tracer provider registered
 * globally (context carried by AsyncLocalStorage) that batches spans to `<endpoint>/v1/traces` as
 * OTLP/HTTP JSON. The API opens one span per request; Temporal's OpenTelemetry interceptors carry
 * its context into the workflow start, the workflow and its activities (worker/create.ts), so
 * one trace spans an API request and the audit it started.
 */
import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export interface Tracing {
  tracer: Tracer;
  /** Where the worker's workflow spans go too (through the interceptors' sink). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Sends what is buffered now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let active: Tracing | null = null;

/**
 * Starts tracing to `endpoint` for `serviceName` (once per process: the API and a worker in one
 * process, as `npm start` runs them, share it); null when no endpoint is configured.
 */
export function startTracing(endpoint: string | null, serviceName: string): Tracing | null {
  if (!endpoint) return active;
  if (active) return active;
  const resource = new Resource({ 'service.name': serviceName });
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }),
    { scheduledDelayMillis: 1000 },
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  active = {
    tracer: trace.getTracer('archaudit'),
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    async shutdown() {
      active = null;
      await provider.shutdown();
      trace.disable();
    },
  };
  return active;
}

/** The tracing this process started, if any. */
export function activeTracing(): Tracing | null {
  return active;
}
