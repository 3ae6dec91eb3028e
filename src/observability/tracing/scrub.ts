import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { redactSecrets, redactStart } from '../../lib/redact.js';

/** SpanKind.SERVER, spelt out: this file loads nothing of OpenTelemetry but its types. */
const SERVER = 1;
/** The longest string attribute kept (a SQL statement, a path). */
const MAX_TEXT = 2048;
const EMAIL = /[^\s@/?#&=]+@[^\s@/?#&=]+/g;

/**
 * The attributes any span may carry: the HTTP, database and Redis semantic conventions that say
 * what was done, and ours. Anything else an instrumentation adds (user_agent.original, url.query,
 * a captured header, an exception event) is dropped before export, whatever its version adds.
 */
const ALLOWED = new Set([
  'http.request.method', 'http.request.method_original', 'http.response.status_code', 'http.route',
  'url.scheme', 'url.path', 'url.full', 'network.protocol.version', 'network.protocol.name', 'network.transport',
  'server.port', 'error.type',
  'db.system', 'db.system.name', 'db.namespace', 'db.name', 'db.statement', 'db.query.text', 'db.operation.name',
  'db.collection.name', 'db.user', 'db.connection_string', 'net.peer.name', 'net.peer.port', 'net.transport',
]);
/** Where a client span went: the database's or Redis's address. On a server span these are the client's. */
const PEER = new Set(['server.address', 'network.peer.address', 'network.peer.port']);
/** The client's address: personal data, only with OTEL_RECORD_CLIENT_IP=true (set by us, TRUST_PROXY applied). */
const CLIENT = new Set(['client.address']);

/** Text with token shapes (also percent-encoded or hidden), bare token bodies and emails replaced. */
export function scrubText(text: string): string {
  return redactSecrets(redactStart(text, MAX_TEXT)).replace(EMAIL, '[REDACTED]');
}

/** A URL's path only (no query, fragment or user info), scrubbed: queries and paths can hold secrets. */
function scrubUrl(key: string, value: string): string {
  if (key === 'url.full') {
    if (!URL.canParse(value)) return '[REDACTED]';
    const url = new URL(value);
    return `${url.protocol}//${url.host}${scrubText(url.pathname)}`;
  }
  return scrubText(value.replace(/[?#].*$/s, ''));
}

/**
 * Scrubs every span as it ends, before any exporter's processor sees it (it is registered first):
 * attributes outside the allow-list removed, string values passed through {@link scrubText},
 * events and the status message dropped (an exception's message can quote a client's input).
 */
export class ScrubbingSpanProcessor implements SpanProcessor {
  constructor(private readonly recordClientIp: boolean) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    const server = (span.kind as number) === SERVER;
    const attributes = span.attributes as Record<string, unknown>;
    for (const [key, value] of Object.entries(attributes)) {
      const allowed = ALLOWED.has(key) || key.startsWith('rz.') || (PEER.has(key) && !server) || (CLIENT.has(key) && server && this.recordClientIp);
      if (!allowed) Reflect.deleteProperty(attributes, key);
      else if (typeof value === 'string') attributes[key] = key.startsWith('url.') ? scrubUrl(key, value) : scrubText(value);
      else if (Array.isArray(value)) Reflect.deleteProperty(attributes, key);
    }
    (span.events as unknown[]).length = 0;
    if (span.status.message !== undefined) (span as { status: object }).status = { code: span.status.code };
    const name = scrubText(span.name);
    if (name !== span.name) (span as { name: string }).name = name;
    for (const link of span.links) if (link.attributes) (link as { attributes?: object }).attributes = {};
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
