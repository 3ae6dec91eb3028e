import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * What the service asks of tracing (docs/operations.md). Nothing outside src/observability/tracing/sdk.ts and the
 * files only it imports may load OpenTelemetry: with tracing off every caller holds
 * {@link NO_TRACING}, no OpenTelemetry module is loaded and each call below costs a no-op.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** Opens the request spans on an app: registered before any other hook, so they all run inside it. */
  instrument(app: FastifyInstance): Promise<void>;
  /**
   * Runs `work` in a new span, a child of the active one (or, with `root`, of none, linked to
   * `links`), ended when `work` settles.
   */
  inSpan<T>(name: string, options: SpanOptions, work: (span: SpanAttributes) => Promise<T>): Promise<T>;
  /** Sets attributes on the server span of `request`, if it has one. */
  annotateRequest(request: IncomingMessage, attributes: TraceAttributes): void;
  /** The active span, to be linked from a later one; null when there is none or it is not sampled. */
  activeLink(): TraceLink | null;
  /** The ids a log line carries while a span of a sampled trace is active. */
  logFields(): { trace_id: string; span_id: string } | undefined;
  /** Exports what is left; the server calls it last on shutdown. */
  shutdown(): Promise<void>;
}

/** Attributes as spans take them: never a credential, header value, body, email or code. */
export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** Sets attributes on an open span. */
export interface SpanAttributes {
  set(attributes: TraceAttributes): void;
}

/** A span context kept to link to later (W3C ids), by value. */
export interface TraceLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

export interface SpanOptions {
  readonly kind?: 'internal' | 'producer' | 'client';
  readonly attributes?: TraceAttributes;
  /** A new trace rather than a child of the active span (background work that no request started). */
  readonly root?: boolean;
  readonly links?: readonly TraceLink[];
}

/** The attribute names of our own (docs/operations.md). */
export const ATTR = {
  tokenType: 'rz.auth.token_type',
  outcome: 'rz.auth.outcome',
  tokenId: 'rz.token.id',
  webhookEvents: 'rz.webhook.events',
  webhookDeliveries: 'rz.webhook.deliveries',
  webhookDeliveryId: 'rz.webhook.delivery_id',
  webhookEndpointId: 'rz.webhook.endpoint_id',
  webhookAttempt: 'rz.webhook.attempt',
} as const;

const NOTHING: SpanAttributes = { set: () => {} };

/** Tracing off: what every caller holds unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER is set. */
export const NO_TRACING: Tracing = {
  enabled: false,
  instrument: async () => {},
  inSpan: (_name, _options, work) => work(NOTHING),
  annotateRequest: () => {},
  activeLink: () => null,
  logFields: () => undefined,
  shutdown: async () => {},
};
