import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Caller } from '../auth/principal.js';
import { type DestinationStream, pino } from 'pino';
import type { LogLevel } from '../config.js';
import type { HttpMetrics } from '../observability/metrics/http.js';
import type { Tracing } from '../observability/tracing/tracing.js';
import { REDACTED as CENSORED, redactSecretParams, redactSecrets, redactShapes, redactStart } from '../lib/redact.js';

const REDACTED = () => CENSORED;

/**
 * The most of a URL a log line holds, enough for any real request. Redacting is linear but not
 * cheap (escapes are decoded up to four times over), and it runs before authentication: the cut
 * bounds what one request's URL can cost the event loop.
 */
const MAX_LOGGED_URL = 2048;
const loggedUrl = (url: string): string => redactSecretParams(redactStart(url, MAX_LOGGED_URL));

/** Buffered for stdout before lines are dropped: a reader that stops must not grow memory for ever. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** How long a line may wait in the buffer when the server is quiet. */
const FLUSH_INTERVAL_MS = 100;
/**
 * Lines are written in batches of at least this many bytes (or at the flush interval): each write
 * wakes a thread of the pool, which costs more than the bytes, so fewer and larger writes pay.
 */
const BATCH_BYTES = 32 * 1024;

/**
 * Structured JSON logs (pino). Secrets are kept out by construction: the request serializer keeps
 * only method and URL, errors keep only name, message and stack, any top-level `headers`,
 * `authorization`, `cookie`, `password` or `token` field is censored, and every line passes
 * through {@link redactShapes} on its way out, so a token shape never reaches the log whatever
 * field it hides in (text a client sent, like the URL, is also percent-decoded for that check).
 * With tracing on, a line written while a span of a sampled trace is active carries its `trace_id`
 * and `span_id`.
 */
export function loggerOptions(level: LogLevel, stream: DestinationStream, tracing?: Tracing): FastifyServerOptions['logger'] {
  return {
    level,
    stream,
    // A new object each time: pino merges the line's own fields into what the mixin returns.
    ...(tracing?.enabled ? { mixin: () => tracing.logFields() ?? {} } : {}),
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: loggedUrl(req.url) }),
      err: (err: Error) => ({ type: err.name, message: redactSecrets(err.message), stack: redactSecrets(err.stack ?? '') }),
      headers: REDACTED,
      authorization: REDACTED,
      cookie: REDACTED,
      password: REDACTED,
      token: REDACTED,
    },
    hooks: { streamWrite: redactShapes },
  };
}

/**
 * Where lines go in production: stdout, written asynchronously in batches, so a reader that drains
 * slowly (or not at all) never blocks the event loop; past {@link MAX_BUFFERED_BYTES} waiting,
 * lines are dropped rather than kept. pino flushes what is left when the process exits, and a
 * graceful shutdown waits for it ({@link flushLog}); a `kill -9` loses at most the last
 * {@link FLUSH_INTERVAL_MS} of lines, never data.
 */
export function createLogDestination(): DestinationStream & { flush(cb: (error?: Error) => void): void } {
  // sonic-boom requires one write's ceiling (maxWrite, 16 KiB by default) above the batch size.
  const sonic = pino.destination({ dest: 1, sync: false, contentMode: 'buffer', minLength: BATCH_BYTES, maxWrite: 2 * BATCH_BYTES, maxLength: MAX_BUFFERED_BYTES, periodicFlush: FLUSH_INTERVAL_MS });
  // Each line handed on as bytes (sonic-boom's buffer mode, whose types still say string): Node
  // writes a batch of bytes asynchronously with less work than a batch joined as a string.
  return { write: (line: string) => sonic.write(Buffer.from(line) as unknown as string), flush: (cb) => sonic.flush(cb) };
}

/** Waits until every line logged so far is written. */
export function flushLog(destination: { flush(cb: (error?: Error) => void): void }): Promise<void> {
  return new Promise((resolve) => destination.flush(() => resolve()));
}

/** What the access line of one request says. */
export interface AccessEntry {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** Time to produce the response. */
  readonly ms: number;
  readonly remote: string;
  readonly principal: Caller | null;
}

/**
 * The access log: one line per request, with its id, method, URL, status, time to respond, client
 * address and, for an authenticated request, the credential's type and ids (never the credential).
 */
export function logRequest(log: FastifyBaseLogger, entry: AccessEntry): void {
  const { principal, url } = entry;
  const logger = principal ? callerLog(log, principal) : log;
  const ms = Math.round(entry.ms * 100) / 100;
  if (url.length > MAX_LOGGED_URL) {
    logger.info({ request_id: entry.id, method: entry.method, url: loggedUrl(url), url_length: url.length, status: entry.status, ms, remote: entry.remote }, 'request');
  } else {
    logger.info({ request_id: entry.id, method: entry.method, url: recentLoggedUrl(url), status: entry.status, ms, remote: entry.remote }, 'request');
  }
}

/**
 * The URL last logged and what was logged for it: a client usually asks for the same URL as the
 * request before (its checks, GET /api/me), and redacting it again would give the same text.
 */
let lastUrl = '';
let lastLoggedUrl = '';
function recentLoggedUrl(url: string): string {
  if (url !== lastUrl) {
    lastLoggedUrl = loggedUrl(url);
    lastUrl = url;
  }
  return lastLoggedUrl;
}

/** What the access line of a request Node's parser refused says: no method or URL was read. */
export interface RefusedEntry {
  readonly id: string;
  readonly status: number;
  /** The socket's address: no header (X-Forwarded-For included) was read either. */
  readonly remote: string;
  /** Node's code for what was wrong (`HPE_HEADER_OVERFLOW`, `ERR_HTTP_REQUEST_TIMEOUT`...). */
  readonly clientError: string;
}

/** The access line of a request answered before it was parsed (http/client-errors.ts). */
export function logRefusedRequest(log: FastifyBaseLogger, entry: RefusedEntry): void {
  log.info({ request_id: entry.id, status: entry.status, remote: entry.remote, client_error: entry.clientError }, 'request');
}

/**
 * A pino child per caller, whose fields pino serializes once: cached callers are the same objects
 * request after request, and formatting the line is most of what the access log costs.
 */
const callerLogs = new WeakMap<FastifyBaseLogger, WeakMap<Caller, FastifyBaseLogger>>();
function callerLog(log: FastifyBaseLogger, caller: Caller): FastifyBaseLogger {
  let children = callerLogs.get(log);
  if (!children) callerLogs.set(log, (children = new WeakMap()));
  let child = children.get(caller);
  if (!child) {
    child = log.child({ auth: caller.type, ...(caller.type === 'service' ? {} : { user_id: caller.user.id }), credential_id: caller.credentialId });
    children.set(caller, child);
  }
  return child;
}

/** Logs the access line of a request Fastify answered. */
export type AccessLine = (log: FastifyBaseLogger, request: FastifyRequest, reply: FastifyReply) => void;

/**
 * The access line of Fastify's requests, with the client address as the rate limiter sees it; with
 * metrics on, the request is counted there too (the one place every answered request passes).
 */
export function accessLine(clientAddress: (req: IncomingMessage) => string, http: HttpMetrics | null = null): AccessLine {
  const line: AccessLine = (log, request, reply) =>
    logRequest(log, {
      id: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
      remote: clientAddress(request.raw),
      principal: request.principal,
    });
  if (!http) return line;
  return (log, request, reply) => {
    http.answered(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime, request.problemCode);
    line(log, request, reply);
  };
}

/**
 * The access line of every request a route answers, once the response has been sent. An answer
 * Fastify sends outside any route's hooks (its `frameworkErrors`) is logged where it is sent.
 */
export function registerAccessLog(app: FastifyInstance, line: AccessLine): void {
  app.addHook('onResponse', (request, reply, done) => {
    line(app.log, request, reply);
    done();
  });
}
