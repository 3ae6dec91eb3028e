import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectInvalidToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

/**
 * GET /api/me has a shortcut ahead of Fastify (src/http/me-shortcut.ts) for tokens the caches
 * already vouch for. These tests hold it to the route's own answer, byte for byte, and show what
 * it leaves to Fastify. Whether Fastify handled a request is seen from its per-request child
 * logger (bound to the request id), which only Fastify creates.
 */

/** Headers that differ between two answers by design. */
const VARYING = new Set(['date', 'x-request-id', 'ratelimit']);
const comparable = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  body: res.body,
  headers: Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VARYING.has(name))),
});

describe('the GET /api/me shortcut', () => {
  let t: TestApp;
  let user: TestUser;
  const tokens: Record<'jwt' | 'api' | 'app', string> = { jwt: '', api: '', app: '' };

  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '1000/60', RATE_LIMIT_ADDRESS: '1000/60' } });
    user = await signup(t);
    tokens.jwt = user.jwt;
    tokens.api = (await createApiToken(t, user.jwt, { scopes: ['apps:read'] })).token;
    tokens.app = (await registerApp(t, user.jwt)).token;
  });
  afterAll(() => t.close());
  afterEach(() => vi.restoreAllMocks());

  /** Sends through the server's request listener; reports whether Fastify handled it. */
  async function send(options: InjectOptions): Promise<{ res: LightMyRequestResponse; byFastify: boolean }> {
    const child = vi.spyOn(t.app.log, 'child');
    const res = await t.inject(options);
    // Fastify's per-request child carries the request id; the access log's children do not.
    const byFastify = child.mock.calls.some(([bindings]) => 'request_id' in bindings);
    child.mockRestore();
    return { res, byFastify };
  }

  it.each(['jwt', 'api', 'app'] as const)('answers a cached %s token with exactly what the route answers', async (kind) => {
    const request: InjectOptions = { method: 'GET', url: '/api/me', headers: bearer(tokens[kind]) };
    await t.inject(request);
    const { res, byFastify } = await send(request);
    expect(byFastify).toBe(false);
    expect(res.statusCode, res.body).toBe(200);
    const routed = await t.app.inject(request);
    expect(comparable(res)).toEqual(comparable(routed));
    expect(res.headers.ratelimit).toMatch(/^"credential";r=\d+;t=\d+$/);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes the same access line as the route', async () => {
    const request: InjectOptions = { method: 'GET', url: '/api/me', headers: bearer(tokens.api) };
    await t.inject(request);
    const from = t.logs.length;
    const { res } = await send(request);
    const routed = await t.app.inject(request);
    const lines = (await t.settledLogs()).slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
    const byId = (id: unknown) => lines.find((line) => line.request_id === id);
    const shortcut = byId(res.headers['x-request-id']);
    const route = byId(routed.headers['x-request-id']);
    expect(shortcut).toMatchObject({ msg: 'request', method: 'GET', url: '/api/me', status: 200, auth: 'api_token', credential_id: expect.any(String) });
    const strip = (line: Record<string, unknown> = {}) => Object.fromEntries(Object.entries(line).filter(([key]) => !['time', 'request_id', 'ms'].includes(key)));
    expect(strip(shortcut)).toEqual(strip(route));
  });

  it('leaves to Fastify, which answers as the contract says: no token, a malformed or unknown one, a revoked one', async () => {
    const created = await createApiToken(t, user.jwt);
    await t.inject({ method: 'GET', url: '/api/me', headers: bearer(created.token) });
    expect((await json(t, 'DELETE', `/api/tokens/${created.id}`, undefined, user.jwt)).statusCode).toBe(204);
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer\t${tokens.api}` }, bearer(created.token)]) {
      const { res, byFastify } = await send({ method: 'GET', url: '/api/me', headers });
      expect(byFastify).toBe(true);
      if ('authorization' in headers && headers.authorization !== `Bearer\t${tokens.api}`) expectInvalidToken(res);
      else expectProblem(res, 401, 'unauthorized');
    }
  });

  it('leaves other requests to Fastify: other methods, a query string, two Authorization headers', async () => {
    const cases: InjectOptions[] = [
      { method: 'HEAD', url: '/api/me', headers: bearer(tokens.api) },
      { method: 'GET', url: '/api/me?x=1', headers: bearer(tokens.api) },
      { method: 'GET', url: '/api/apps', headers: bearer(tokens.api) },
    ];
    for (const request of cases) expect((await send(request)).byFastify).toBe(true);
  });

  it('GET /api/me with a body was answered 200 by the shortcut as if it had none: now left to Fastify, which refuses it', async () => {
    const request: InjectOptions = { method: 'GET', url: '/api/me', headers: bearer(tokens.api) };
    await t.inject(request);
    const cases: Array<[InjectOptions, number, string]> = [
      [{ ...request, headers: { ...bearer(tokens.api), 'content-type': 'text/plain' }, payload: 'ab' }, 415, 'unsupported_media_type'],
      [{ ...request, headers: { ...bearer(tokens.api), 'content-type': 'application/json' }, payload: '{"user_id":1}' }, 400, 'validation_failed'],
      [{ ...request, headers: { ...bearer(tokens.api), 'content-type': 'application/json', 'content-length': '99999' } }, 413, 'payload_too_large'],
      [{ ...request, headers: { ...bearer(tokens.api), 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, payload: '{}' }, 400, 'validation_failed'],
    ];
    for (const [options, status, code] of cases) {
      const { res, byFastify } = await send(options);
      expect(byFastify).toBe(true);
      expectProblem(res, status, code);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    // An empty body is no body: the shortcut still answers.
    const empty = await send({ ...request, headers: { ...bearer(tokens.api), 'content-type': 'text/plain', 'content-length': '0' }, payload: '' });
    expect([empty.res.statusCode, empty.byFastify]).toEqual([200, false]);
  });

  it('a request over the limit is counted once more and answered 429 by Fastify, with its RateLimit fields', async () => {
    const limited = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '2/60' } });
    try {
      const { token } = await createApiToken(limited, (await signup(limited)).jwt);
      const me = () => limited.inject({ method: 'GET', url: '/api/me', headers: bearer(token) });
      expect((await me()).statusCode).toBe(200);
      expect((await me()).statusCode).toBe(200);
      const refused = await me();
      expectProblem(refused, 429, 'rate_limited');
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.headers['ratelimit-policy']).toBe('"credential";q=2;w=60');
      expect(refused.headers.ratelimit).toMatch(/^"credential";r=0;t=\d+$/);
    } finally {
      await limited.close();
    }
  });
});
