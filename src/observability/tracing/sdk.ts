// Loaded only when tracing is configured (src/observability/tracing/config.ts), before the server: the bundle
// imports it as a file of its own (dist/tracing.js), so with tracing off no OpenTelemetry module is
// ever loaded. Nothing else in src/ imports OpenTelemetry; the service calls it through Tracing.
import { createRequire, register } from 'node:module';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Tracer } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from './config.js';
import { ScrubbingSpanProcessor } from './scrub.js';
import { type ServerSpans, serverSpans } from './server-spans.js';
import type { SpanAttributes, Tracing } from './tracing.js';

const require = createRequire(import.meta.url);
const KINDS = { internal: SpanKind.INTERNAL, producer: SpanKind.PRODUCER, client: SpanKind.CLIENT } as const;
/** What a span-less piece of work is handed. */
const UNTRACED: SpanAttributes = { set: () => {} };

/**
 * The exporters OTEL_TRACES_EXPORTER names, each behind the SDK's batching processor (console's
 * behind the simple one, so each span prints as it ends). Our scrubber goes in front of them all,
 * which is why they are built here rather than by the SDK from the same variables.
 */
function processorsFor(config: TracingConfig): SpanProcessor[] {
  return config.exporters.map((name) => {
    if (name === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter());
    if (name === 'zipkin') return new BatchSpanProcessor(new ZipkinExporter());
    const protocol = config.otlpProtocol;
    return new BatchSpanProcessor(protocol === 'grpc' ? new GrpcTraceExporter() : protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter());
  });
}

export interface TracingOptions {
  /** Instead of the exporters the environment names (tests: an in-memory exporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
}

/**
 * Starts the OpenTelemetry SDK with the HTTP (outgoing), pg, ioredis and undici instrumentations,
 * W3C trace context, the sampler of OTEL_TRACES_SAMPLER (parentbased_traceidratio at 0.01 when
 * unset) and the scrubber in front of every exporter (scrub.ts); the server spans are ours
 * (server-spans.ts). Call it before the server is loaded.
 */
export function startTracing(config: TracingConfig, options: TracingOptions = {}): Tracing {
  // ES modules imported from now on (pg and ioredis, loaded when configured) can be instrumented.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const instrumentations = [
    new HttpInstrumentation({
      // The server span is ours (server-spans.ts), which knows the route; the instrumentation's
      // own of the same request cost more than the rest of tracing together.
      disableIncomingRequestInstrumentation: true,
      // Outgoing calls of a request not sampled are not traces of their own.
      requireParentforOutgoingSpans: true,
      // No header is captured, whatever the environment says: Authorization and Cookie never reach a span.
      headersToSpanAttributes: { server: { requestHeaders: [], responseHeaders: [] }, client: { requestHeaders: [], responseHeaders: [] } },
      // Webhook deliveries have spans of their own (src/webhooks/worker.ts): a receiver's URL can
      // hold a secret, and a third party gets no trace context of ours.
      ignoreOutgoingRequestHook: (request) => !Array.isArray(request.headers) && (request.headers as Record<string, unknown> | undefined)?.['webhook-id'] !== undefined,
    }),
    new UndiciInstrumentation({ requireParentforSpans: true }),
    // Spans only under a request or other traced work, not for every background poll.
    new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
    new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
  ];
  const sdk = new NodeSDK({
    ...(config.serviceName === null ? {} : { serviceName: config.serviceName }),
    ...(config.defaultRatio === null ? {} : { sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.defaultRatio) }) }),
    spanProcessors: [new ScrubbingSpanProcessor(config.recordClientIp), ...(options.spanProcessors ?? processorsFor(config))],
    instrumentations,
    // Traces only: metrics are prom-client's (METRICS_ADDR), logs go to stdout.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  // The bundle imported node:http and node:https before tracing started: requiring them again now
  // lets the instrumentation patch the one module object every importer shares.
  require('node:http');
  require('node:https');
  const tracer = trace.getTracer('rz-auth');
  return createTracing(tracer, serverSpans(tracer, config.recordClientIp), () => sdk.shutdown());
}

function createTracing(tracer: Tracer, requests: ServerSpans, shutdown: () => Promise<void>): Tracing {
  return {
    enabled: true,
    instrument(app) {
      requests.register(app);
      return Promise.resolve();
    },
    inSpan(name, options, work) {
      const parent = options.root ? ROOT_CONTEXT : context.active();
      // A child only of a recorded span: a request not sampled has none active (server-spans.ts).
      if (!options.root && trace.getSpan(parent) === undefined) return work(UNTRACED);
      const links = options.links?.map((link) => ({ context: { ...link } }));
      const spanOptions = { kind: KINDS[options.kind ?? 'internal'], ...(options.attributes ? { attributes: options.attributes } : {}), ...(links ? { links } : {}) };
      return tracer.startActiveSpan(name, spanOptions, parent, async (span) => {
        try {
          return await work({ set: (attributes) => span.setAttributes(attributes) });
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    annotateRequest(request, attributes) {
      requests.of(request)?.setAttributes(attributes);
    },
    activeLink() {
      const span = trace.getActiveSpan()?.spanContext();
      return span && span.traceFlags & TraceFlags.SAMPLED ? { traceId: span.traceId, spanId: span.spanId, traceFlags: span.traceFlags } : null;
    },
    logFields() {
      // Only a sampled trace's: the ids of one that is not exported lead nowhere, and most lines are not in one.
      const span = trace.getActiveSpan()?.spanContext();
      return span && span.traceFlags & TraceFlags.SAMPLED ? { trace_id: span.traceId, span_id: span.spanId } : undefined;
    },
    shutdown,
  };
}
