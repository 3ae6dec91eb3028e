import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyServerOptions } from 'fastify';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { ChangeFeed } from '../changes/feed.js';
import type { ProblemError } from '../errors.js';
import { requestId } from '../lib/ids.js';
import { http } from '../lib/node-http.js';
import { perObject } from '../lib/per-object.js';
import { meBody, serializeMe } from '../me/routes.js';
import type { Decision } from '../ratelimit/limiter.js';
import { plainBearerToken } from './bearer.js';
import { SECURITY_HEADERS } from './headers.js';
import { type AccessLog, requestFields, urlField } from './logging.js';
import { limitField, policyField, type RequestLimits } from './rate-limit.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * What the fast path did before it handed a request on: who the caller is, and the rate-limit
 * decision already counted for it, or the limiter's failure (the guard uses them instead of
 * counting the request twice).
 */
export interface Admission {
  readonly principal: Principal;
  readonly decision: Decision | null;
  readonly error?: ProblemError;
}

const admissions = new WeakMap<IncomingMessage, Admission>();

/** The admission the fast path left on a request, once. */
export function takeAdmission(req: IncomingMessage): Admission | undefined {
  const admission = admissions.get(req);
  if (admission) admissions.delete(req);
  return admission;
}

/** The access line's fields for the one answer given here. */
const ME_FIELDS = requestFields('GET', urlField('/api/me'), 200);
const CONSTANT_HEADERS = [...Object.entries(SECURITY_HEADERS).flat(), 'content-type', 'application/json; charset=utf-8'];
/**
 * The response's header list (name, value, ...) with the per-request values left empty: each
 * response copies it and fills them in, which costs less than spreading the constant part into a new array.
 */
const HEADERS = [...CONSTANT_HEADERS, 'x-request-id', '', 'content-length', ''];
const LIMITED_HEADERS = [...HEADERS, 'ratelimit-policy', '', 'ratelimit', ''];
/** Where a header's value goes in both lists (the limited one extends the other). */
const valueOf = (name: string): number => LIMITED_HEADERS.indexOf(name) + 1;
const ID = valueOf('x-request-id');
const LENGTH = valueOf('content-length');
const POLICY = valueOf('ratelimit-policy');
const LIMIT = valueOf('ratelimit');

/**
 * The serialized answer for a principal. It depends on nothing else, and cached principals are the
 * same objects request after request, so each is serialized once.
 *
 * With it, how to write it: Node sends the head and a string body as one string in the body's
 * encoding. As UTF-8 that string is converted on the way out; a body of ASCII only (names and ids
 * without accents) is the same bytes in Latin-1, which is copied as it is. Any other body is UTF-8.
 */
const bodyOf = perObject((principal: Principal): { body: string; length: string; encoding: 'latin1' | 'utf8' } => {
  const body = serializeMe(meBody(principal));
  const bytes = Buffer.byteLength(body);
  return { body, length: String(bytes), encoding: bytes === body.length ? 'latin1' : 'utf8' };
});

export interface FastPathDeps {
  readonly authenticator: Authenticator;
  readonly limits: RequestLimits;
  readonly feed: ChangeFeed;
  readonly accessLog: AccessLog;
  readonly clientAddress: (req: IncomingMessage) => string | undefined;
}

/**
 * `GET /api/me` is what every other service of the platform calls to authenticate a request, so it
 * is answered here, ahead of Fastify, when the framework has nothing to add: after the change feed
 * has caught up (as before every API request), the caches vouch for the bearer token (no store
 * read, no signature check) and the rate limit allows the request. The answer is the route's own:
 * the same body (same schema serializer), headers, RateLimit fields and access-log line. What is
 * skipped is Fastify's per-request machinery: request and reply objects, hook runners, routing.
 *
 * Everything else, every error included, goes to Fastify untouched. Once the fast path has counted
 * a request against the rate limit, it hands it on with an {@link Admission} so the guard does not
 * count it twice. test/http/fast-path.test.ts holds both paths to the same bytes.
 */
export class FastPath {
  private closing = false;
  /** Requests answered here rather than by Fastify (tests use it to know which path answered). */
  answered = 0;

  constructor(private readonly deps: FastPathDeps) {}

  /** From now on every request goes to Fastify (which then adds `Connection: close` and 503s). */
  close(): void {
    this.closing = true;
  }

  handle(req: IncomingMessage, res: ServerResponse, fallback: RequestHandler): void {
    if (req.method !== 'GET' || req.url !== '/api/me' || this.closing) return fallback(req, res);
    const start = performance.now();
    // Any other form of the header (other spacing or casing, errors) is Fastify's to read.
    const token = plainBearerToken(req);
    if (token === undefined) return fallback(req, res);
    // Catch up with changes other processes made first, so the caches are current when asked.
    const pending = this.deps.feed.sync();
    if (pending === undefined) this.admit(req, res, fallback, token, start);
    else pending.then(() => this.admit(req, res, fallback, token, start), () => fallback(req, res));
  }

  private admit(req: IncomingMessage, res: ServerResponse, fallback: RequestHandler, token: string, start: number): void {
    const principal = this.deps.authenticator.cached(token);
    if (principal === null) return fallback(req, res);
    this.deps.limits.countCredential(
      principal,
      (decision) => {
        if (decision !== null && !decision.allowed) return this.handOn(req, res, fallback, { principal, decision });
        try {
          this.respond(req, res, principal, decision, start);
        } catch {
          if (!res.headersSent) this.handOn(req, res, fallback, { principal, decision });
        }
      },
      (error) => this.handOn(req, res, fallback, { principal, decision: null, error }),
    );
  }

  private handOn(req: IncomingMessage, res: ServerResponse, fallback: RequestHandler, admission: Admission): void {
    admissions.set(req, admission);
    fallback(req, res);
  }

  private respond(req: IncomingMessage, res: ServerResponse, principal: Principal, decision: Decision | null, start: number): void {
    const id = requestId();
    const { body, length, encoding } = bodyOf(principal);
    const headers = (decision === null ? HEADERS : LIMITED_HEADERS).slice();
    headers[ID] = id;
    headers[LENGTH] = length;
    if (decision !== null) {
      headers[POLICY] = policyField(decision);
      headers[LIMIT] = limitField(decision);
    }
    res.writeHead(200, headers);
    res.end(body, encoding);
    this.answered++;
    const { accessLog, clientAddress } = this.deps;
    if (accessLog.enabled()) accessLog.line(id, ME_FIELDS, performance.now() - start, clientAddress(req), principal);
  }
}

/**
 * The HTTP server Fastify would create for these options, with `handler` in front of Fastify's own
 * (given to Fastify as its `serverFactory`).
 */
export function createHttpServer(options: FastifyServerOptions & { http?: ServerOptions }, handler: RequestHandler): Server {
  const server = http.createServer(options.http ?? {}, handler);
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}
