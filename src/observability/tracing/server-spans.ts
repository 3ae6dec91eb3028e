// Loaded only with the SDK (sdk.ts): the server span of each request, through the public API alone.
import type { IncomingMessage } from 'node:http';
import { type Context, context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUuid } from '../../lib/ids.js';
import { ATTR } from './tracing.js';

/** Management routes whose template names a token's id: their server span carries it (rz.token.id). */
const TOKEN_ROUTE = /^\/api\/tokens\/:id(\/|$)/;

export interface ServerSpans {
  /** Adds the hooks to the root app, before any other hook, so that the rest run inside the span. */
  register(app: FastifyInstance): void;
  /** The recorded server span of a request; none when it is not sampled. */
  of(request: IncomingMessage): Span | undefined;
}

/**
 * One SERVER span per request, named `<METHOD> <route template>` (a path no route matches by its
 * method alone: the path is the client's text), a child of the caller's `traceparent`. Only a span
 * the sampler records becomes the active context of the rest of the request (log correlation,
 * store and password spans under it): the 99 % not sampled pay for the sampler's decision and
 * nothing else, no context carried through every asynchronous step (on Node 20 the first recorded
 * request still turns AsyncLocalStorage's hooks on for the whole process: docs/operations.md).
 */
export function serverSpans(tracer: Tracer, recordClientIp: boolean): ServerSpans {
  const open = new WeakMap<IncomingMessage, Span>();
  /** The context the rest of the request runs in, when its span is recorded. */
  const start = (request: FastifyRequest): Context | undefined => {
    const route = request.routeOptions.url;
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const name = route === undefined ? request.method : `${request.method} ${route}`;
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, ...(route === undefined ? {} : { 'http.route': route }) } }, parent);
    if (!span.isRecording()) return undefined;
    const query = request.url.indexOf('?');
    span.setAttributes({ 'url.path': query < 0 ? request.url : request.url.slice(0, query), 'url.scheme': request.protocol, 'network.protocol.version': request.raw.httpVersion });
    const id = (request.params as Record<string, unknown> | undefined)?.id;
    if (route !== undefined && TOKEN_ROUTE.test(route) && typeof id === 'string' && isUuid(id)) span.setAttribute(ATTR.tokenId, id);
    // The address TRUST_PROXY admits, not the first X-Forwarded-For entry anyone can send.
    if (recordClientIp) span.setAttribute('client.address', request.server.clientAddress(request.raw));
    open.set(request.raw, span);
    return trace.setSpan(parent, span);
  };
  // Ended once, by whichever comes first: the answer sent, the client gone, the socket timed out.
  const end = (request: FastifyRequest, status: number | null): void => {
    const span = open.get(request.raw);
    if (span === undefined) return;
    open.delete(request.raw);
    if (status !== null) span.setAttribute('http.response.status_code', status);
    if (status === null || status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  return {
    register(app) {
      app.addHook('onRequest', (request, _reply, done) => {
        const active = start(request);
        if (active === undefined) done();
        else context.with(active, done);
      });
      app.addHook('onResponse', (request, reply, done) => {
        end(request, reply.statusCode);
        done();
      });
      app.addHook('onTimeout', (request, _reply, done) => {
        end(request, null);
        done();
      });
      app.addHook('onRequestAbort', (request, done) => {
        end(request, null);
        done();
      });
    },
    of: (request) => open.get(request),
  };
}
