import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { startTracing } from '../../src/observability/tracing/sdk.js';

// Started before anything loads pg, ioredis or the app, as `serve` does (src/observability/tracing/load.ts):
// every later import is dynamic. Ratio 1 so that every request is recorded.
const exporter = new InMemorySpanExporter();
const tracing = startTracing({ exporters: [], otlpProtocol: 'http/protobuf', recordClientIp: false, defaultRatio: 1, serviceName: 'rz-auth' }, { spanProcessors: [new SimpleSpanProcessor(exporter)] });
const { startRealServer, rawRequest } = await import('../helpers/real-server.js');
const { freshPostgresDatabase, postgresAvailable, redisAvailable, REDIS_URL, uniquePrefix } = await import('../helpers/services.js');
const { startReceiver } = await import('../helpers/webhooks.js');
const { loggerOptions } = await import('../../src/http/logging.js');

type RealServer = Awaited<ReturnType<typeof startRealServer>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** PostgreSQL and Redis when reachable (store and Redis spans come from their drivers), else SQLite. */
const onServices = (await postgresAvailable()) && (await redisAvailable());

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const byId = (id: string | undefined): ReadableSpan | undefined => spans().find((s) => s.spanContext().spanId === id);
/** The server span a span belongs to: its nearest SERVER ancestor (itself included). */
function serverOf(span: ReadableSpan): ReadableSpan | undefined {
  for (let s: ReadableSpan | undefined = span; s; s = byId(s.parentSpanContext?.spanId)) if (s.kind === SpanKind.SERVER) return s;
  return undefined;
}
const servers = (name: string): ReadableSpan[] => spans().filter((s) => s.kind === SpanKind.SERVER && s.name === name);
const scope = (s: ReadableSpan): string => s.instrumentationScope.name;

/** Polls until the span named `name` has ended (a server span ends once the response is sent). */
async function ended(name: string, count = 1): Promise<ReadableSpan[]> {
  for (let i = 0; i < 200 && spans().filter((s) => s.name === name).length < count; i++) await new Promise((r) => setTimeout(r, 25));
  const found = spans().filter((s) => s.name === name);
  expect(found.length, `spans named ${name}`).toBeGreaterThanOrEqual(count);
  return found;
}

describe(`traces (${onServices ? 'PostgreSQL + Redis' : 'SQLite'})`, () => {
  let server: RealServer;
  let receiver: Receiver;
  let dropDatabase = async () => {};
  /** Every secret the session sends or receives: none may appear in any exported span. */
  const secrets: string[] = [];
  const tag = randomUUID().slice(0, 8);
  const email = `tracing-${tag}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const noise = { cookie: `session=COOKIE${tag}VALUE`, header: `HEADER${tag}VALUE`, agent: `AGENT${tag}VALUE`, query: `QUERY${tag}VALUE`, hook: `HOOK${tag}SECRET` };
  let jwt = '';
  let api: { id: string; token: string };

  const call = async (method: string, path: string, options: { token?: string; body?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const body = options.form ? new URLSearchParams(options.form).toString() : options.body === undefined ? undefined : JSON.stringify(options.body);
    const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
  };

  beforeAll(async () => {
    const database = onServices ? await freshPostgresDatabase() : null;
    if (database) dropDatabase = database.drop;
    const scaleOut: Record<string, string> = database ? { DATABASE_URL: database.url, REDIS_URL, REDIS_PREFIX: uniquePrefix() } : {};
    server = await startRealServer({ ...scaleOut, RATE_LIMITS: 'on', WEBHOOK_ALLOW_PRIVATE: 'true' }, tracing);
    receiver = await startReceiver();
    secrets.push(email, password, ...Object.values(noise));

    const signup = await call('POST', '/api/auth/signup', { body: { email, username: `tracing_${tag}`, password } });
    expect(signup.status).toBe(201);
    const login = await call('POST', '/api/auth/login', { body: { email, password } });
    expect(login.status).toBe(200);
    jwt = String(login.body.token);
    secrets.push(String(signup.body.token), jwt);
    expect((await call('POST', '/api/auth/login', { body: { email, password: `${password}-wrong` } })).status).toBe(401);

    const hook = await call('POST', '/api/webhooks', { token: jwt, body: { url: `${receiver.url}/hook/${noise.hook}?key=${noise.hook}`, event_types: ['token.created'] } });
    expect(hook.status).toBe(201);
    secrets.push(String(hook.body.secret));
    const created = await call('POST', '/api/tokens', { token: jwt, body: { name: 'traced', scopes: ['tokens:read'] } });
    expect(created.status).toBe(201);
    api = { id: String(created.body.id), token: String(created.body.token) };
    secrets.push(api.token);

    const headers = { cookie: noise.cookie, 'x-custom': noise.header, 'user-agent': noise.agent };
    expect((await call('GET', '/api/me', { token: api.token, headers })).status).toBe(200);
    expect((await call('GET', `/api/me?access_token=${api.token}&email=${encodeURIComponent(email)}&q=${noise.query}`, { token: api.token })).status).toBe(200);
    expect((await call('GET', `/api/tokens/${api.id}`, { token: api.token })).status).toBe(200);
    expect((await call('GET', `/api/nowhere/${api.token}/${encodeURIComponent(email)}`, { token: jwt })).status).toBe(404);
    expect((await call('GET', '/api/me', { token: `${api.token.slice(0, -2)}xx` })).status).toBe(401);

    const service = await server.services.serviceCredentials.create(`tracing-${tag}`);
    secrets.push(service.token);
    const introspected = await call('POST', '/api/introspect', { token: service.token, form: { token: api.token } });
    expect(introspected.body.active).toBe(true);

    await server.services.webhookDelivery.runOnce();
    await receiver.waitFor('the webhook delivery', () => receiver.answered.length > 0);
    // Positive control: the secret in the endpoint's URL really was sent.
    expect(receiver.answered[0]?.path).toContain(noise.hook);
    await ended('rz.webhook.deliver');
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await server?.close();
    await dropDatabase();
  });

  it('one server span per request, named by its route template; an unmatched path is named by its method only', async () => {
    await ended('GET /api/me', 3);
    for (const name of ['POST /api/auth/signup', 'POST /api/auth/login', 'POST /api/tokens', 'GET /api/tokens/:id', 'POST /api/introspect', 'POST /api/webhooks']) {
      expect(servers(name), name).not.toHaveLength(0);
    }
    const unmatched = spans().filter((s) => s.kind === SpanKind.SERVER && s.attributes['http.response.status_code'] === 404);
    expect(unmatched.map((s) => s.name)).toEqual(['GET']);
    expect(unmatched[0]?.attributes['http.route']).toBeUndefined();
  });

  it('the guard decision on the server span: the token type and the outcome, and the token id only on /api/tokens/:id', async () => {
    const [me] = await ended('GET /api/me');
    expect(me?.attributes).toMatchObject({ 'rz.auth.token_type': 'api_token', 'rz.auth.outcome': 'ok', 'http.route': '/api/me', 'http.response.status_code': 200 });
    expect(me?.attributes['rz.token.id']).toBeUndefined();
    expect(servers('GET /api/me').find((s) => s.attributes['http.response.status_code'] === 401)?.attributes).toMatchObject({ 'rz.auth.token_type': 'none', 'rz.auth.outcome': 'invalid_token' });
    expect(servers('GET /api/tokens/:id')[0]?.attributes).toMatchObject({ 'rz.token.id': api.id, 'rz.auth.token_type': 'api_token' });
    expect(servers('POST /api/introspect')[0]?.attributes).toMatchObject({ 'rz.auth.token_type': 'service', 'rz.auth.outcome': 'ok' });
    // Personal data, off unless OTEL_RECORD_CLIENT_IP=true.
    expect(spans().filter((s) => s.attributes['client.address'] !== undefined || s.attributes['network.peer.address'] !== undefined && s.kind === SpanKind.SERVER)).toEqual([]);
  });

  it('a password check is a child span of its login request', async () => {
    const checks = await ended('rz.password.verify', 2);
    expect(checks.map((s) => serverOf(s)?.name)).toEqual(['POST /api/auth/login', 'POST /api/auth/login']);
  });

  it.skipIf(!onServices)('store calls (pg) are child spans of the request that made them, their SQL without values', () => {
    const queries = spans().filter((s) => scope(s) === '@opentelemetry/instrumentation-pg');
    expect(queries.map((s) => serverOf(s)?.name)).toContain('POST /api/tokens');
    expect(queries.map((s) => serverOf(s)?.name)).toContain('GET /api/me');
    // Redis spans come from the built server in test/e2e/tracing.test.ts: under vitest the ioredis
    // module is loaded in a way its instrumentation does not see.
  });

  it('a webhook delivery is a CLIENT span linked to the PRODUCER span of its dispatch, and no HTTP span of its own', async () => {
    const [deliver] = await ended('rz.webhook.deliver');
    const dispatches = spans().filter((s) => s.name === 'rz.webhook.dispatch');
    expect(deliver?.kind).toBe(SpanKind.CLIENT);
    expect(dispatches.every((s) => s.kind === SpanKind.PRODUCER)).toBe(true);
    expect(dispatches.map((s) => s.spanContext().spanId)).toContain(deliver?.links[0]?.context.spanId);
    expect(deliver?.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 204, 'server.address': '127.0.0.1' });
    const port = Number(new URL(receiver.url).port);
    expect(spans().filter((s) => s.kind === SpanKind.CLIENT && s.attributes['server.port'] === port && s !== deliver)).toEqual([]);
  });

  it('no span holds a token, a header value, an email, a password, a code or a query string: names, attributes, events, links, resource', () => {
    expect(spans().length).toBeGreaterThan(20);
    const text = JSON.stringify(spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, links: s.links, status: s.status, resource: s.resource.attributes })));
    for (const secret of secrets) expect(text, 'a secret the session sent').not.toContain(secret);
    expect(text).not.toMatch(/rz[as]?_[0-9a-z]{8}|whsec_|eyJ|@example\.com|access_token|authorization|cookie/i);
    expect(text).not.toContain('?');
  });

  it('an incoming traceparent is honoured: the server span joins the caller\'s trace under its span', async () => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await rawRequest(server.port, `GET /api/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${api.token}\r\ntraceparent: 00-${traceId}-${parent}-01`);
    expect(res.status).toBe(200);
    for (let i = 0; i < 100 && !spans().some((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER); i++) await new Promise((r) => setTimeout(r, 20));
    const span = spans().find((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER);
    expect(span?.name).toBe('GET /api/me');
    expect(span?.parentSpanContext).toMatchObject({ traceId, spanId: parent, isRemote: true });
  });

  it('a request its caller did not sample leaves no span at all: no server span, and no orphan child (password, store) as a trace of its own', async () => {
    const traceId = randomBytes(16).toString('hex');
    const before = spans().length;
    const body = JSON.stringify({ email, password });
    const head = `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\ntraceparent: 00-${traceId}-${randomBytes(8).toString('hex')}-00`;
    const res = await rawRequest(server.port, head, body);
    expect(res.status).toBe(200);
    // Positive control: the same login sampled makes its spans (a server span and a password check).
    expect((await call('POST', '/api/auth/login', { body: { email, password } })).status).toBe(200);
    await ended('rz.password.verify', 3);
    await ended('POST /api/auth/login', 3);
    const made = spans().slice(before);
    expect(made.filter((s) => s.spanContext().traceId === traceId)).toEqual([]);
    expect(made.filter((s) => s.name === 'rz.password.verify').map((s) => serverOf(s)?.name)).toEqual(['POST /api/auth/login']);
    // Webhook dispatches and deliveries are traces of their own by design (linked, not children).
    expect(made.filter((s) => serverOf(s) === undefined && s.kind !== SpanKind.SERVER && !s.name.startsWith('rz.webhook.')).map((s) => s.name)).toEqual([]);
  });

  it('log lines carry trace_id and span_id while a span is active, and nothing outside one', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) });
    const options = loggerOptions('info', stream, tracing);
    const log = pino(options as object, stream);
    const ids = await tracing.inSpan('test.work', { root: true }, async () => {
      log.info({ request_id: 'a' }, 'inside');
      return tracing.activeLink();
    });
    // Lines with fields of their own, outside any span, twice: pino merges them into the mixin's object.
    log.info({ request_id: 'b' }, 'outside');
    log.info({ request_id: 'c' }, 'outside again');
    const [inside, outside, again] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(ids).not.toBeNull();
    expect(inside).toMatchObject({ msg: 'inside', request_id: 'a', trace_id: ids?.traceId, span_id: ids?.spanId });
    expect(outside).toMatchObject({ msg: 'outside', request_id: 'b' });
    expect(again).toMatchObject({ msg: 'outside again', request_id: 'c' });
    expect(outside?.trace_id).toBeUndefined();
  });
});
