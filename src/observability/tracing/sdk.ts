// Loaded only when tracing is configured (src/observability/tracing/config.ts), before the server: the bundle
// imports it as a file of its own (dist/tracing.js), so with tracing off no OpenTelemetry module is
// ever loaded. Nothing else in src/ imports OpenTelemetry; the service calls it through Tracing.
import type { IncomingMessage } from 'node:http';
import { createRequire, register } from 'node:module';
import { context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { FastifyOtelInstrumentation } from '@fastify/otel';
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
import type { FastifyRequest } from 'fastify';
import { isUuid } from '../../lib/ids.js';
import type { TracingConfig } from './config.js';
import { ScrubbingSpanProcessor } from './scrub.js';
import { ATTR, type Tracing } from './tracing.js';

const require = createRequire(import.meta.url);
const KINDS = { internal: SpanKind.INTERNAL, producer: SpanKind.PRODUCER, client: SpanKind.CLIENT } as const;
/** Management routes whose template names a token's id: their server span carries it (rz.token.id). */
const TOKEN_ROUTE = /^\/api\/tokens\/:id(\/|$)/;

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
 * Starts the OpenTelemetry SDK with the HTTP, Fastify, pg, ioredis and undici instrumentations,
 * W3C trace context, the sampler of OTEL_TRACES_SAMPLER (parentbased_traceidratio at 0.01 when
 * unset) and the scrubber in front of every exporter (scrub.ts). Call it before the server is loaded.
 */
export function startTracing(config: TracingConfig, options: TracingOptions = {}): Tracing {
  // ES modules imported from now on (pg and ioredis, loaded when configured) can be instrumented.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const serverSpans = new WeakMap<IncomingMessage, Span>();
  const serverSpan = (request: IncomingMessage): Span | undefined => serverSpans.get(request) ?? trace.getActiveSpan();
  // The server span of each request is Fastify's (@fastify/otel), which knows the route: the HTTP
  // instrumentation's span of the same request cost more than the rest of tracing together.
  const fastify = new FastifyOtelInstrumentation({
    // An error's message can quote what a client sent; the status code says enough.
    recordExceptions: false,
    // One span per request, not one per hook and handler.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, request: FastifyRequest) => {
      if (!span.isRecording()) return;
      serverSpans.set(request.raw, span);
      const route = request.routeOptions.url;
      // A path no route matches is named by its method alone: the path is the client's text.
      span.updateName(route === undefined ? request.method : `${request.method} ${route}`);
      span.setAttributes({ 'url.scheme': request.protocol, 'network.protocol.version': request.raw.httpVersion });
      const id = (request.params as Record<string, unknown> | undefined)?.id;
      if (route !== undefined && TOKEN_ROUTE.test(route) && typeof id === 'string' && isUuid(id)) span.setAttribute(ATTR.tokenId, id);
      // The address TRUST_PROXY admits, not the first X-Forwarded-For entry anyone can send.
      if (config.recordClientIp) span.setAttribute('client.address', request.server.clientAddress(request.raw));
    },
  });
  const instrumentations = [
    new HttpInstrumentation({
      disableIncomingRequestInstrumentation: true,
      // No header is captured, whatever the environment says: Authorization and Cookie never reach a span.
      headersToSpanAttributes: { server: { requestHeaders: [], responseHeaders: [] }, client: { requestHeaders: [], responseHeaders: [] } },
      // Webhook deliveries have spans of their own (src/webhooks/worker.ts): a receiver's URL can
      // hold a secret, and a third party gets no trace context of ours.
      ignoreOutgoingRequestHook: (request) => !Array.isArray(request.headers) && (request.headers as Record<string, unknown> | undefined)?.['webhook-id'] !== undefined,
    }),
    fastify,
    new UndiciInstrumentation(),
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
  return createTracing(fastify, serverSpan, () => sdk.shutdown());
}

function createTracing(fastify: FastifyOtelInstrumentation, serverSpan: (request: IncomingMessage) => Span | undefined, shutdown: () => Promise<void>): Tracing {
  const tracer = trace.getTracer('rz-auth');
  return {
    enabled: true,
    async instrument(app) {
      await app.register(fastify.plugin());
    },
    inSpan(name, options, work) {
      const parent = options.root ? ROOT_CONTEXT : context.active();
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
      serverSpan(request)?.setAttributes(attributes);
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
