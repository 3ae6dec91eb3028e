import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectProblem, flip, json, login, registerApp, signup, type TestUser } from '../helpers/api.js';
import { rawRequest, startRealServer } from '../helpers/real-server.js';

/*
 * GET /api/me is answered ahead of Fastify when the caches vouch for the token (http/fast-path.ts).
 * `t.inject` goes through the server's request handler, fast path first; `t.app.inject` goes
 * straight to Fastify. The two must be indistinguishable to a client.
 */

/** Headers that differ between any two responses. */
const PER_RESPONSE = new Set(['x-request-id', 'date', 'ratelimit']);

function comparable(res: LightMyRequestResponse): { status: number; headers: Record<string, unknown>; body: string } {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !PER_RESPONSE.has(name)));
  return { status: res.statusCode, headers, body: res.body };
}

/** Sends a request through the server's handler; returns the response and whether the fast path answered it. */
async function viaServer(t: TestApp, options: Parameters<TestApp['inject']>[0]): Promise<{ res: LightMyRequestResponse; fast: boolean }> {
  const before = t.app.fastPath.answered;
  const res = await t.inject(options);
  return { res, fast: t.app.fastPath.answered === before + 1 };
}

const me = (token: string, extra: Record<string, string> = {}) => ({ method: 'GET' as const, url: '/api/me', headers: { ...bearer(token), ...extra } });

describe('GET /api/me fast path', () => {
  let t: TestApp;
  let user: TestUser;
  let tokens: Record<'user' | 'api_token' | 'app_token', string>;
  /** A credential of each type that no request has used yet. */
  const fresh = {
    user: () => login(t, user.email),
    api_token: async () => (await createApiToken(t, user.jwt, { scopes: ['apps:read'], expires_at: new Date(Date.now() + 86_400_000).toISOString() })).token,
    app_token: async () => (await registerApp(t, user.jwt, { name: 'Ünïcode gäme ✓' })).token,
  };
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '1000/60' } });
    user = await signup(t);
    tokens = { user: await fresh.user(), api_token: await fresh.api_token(), app_token: await fresh.app_token() };
  });
  afterAll(() => t.close());

  for (const type of ['user', 'api_token', 'app_token'] as const) {
    it(`${type}: the first request fills the cache through Fastify, later ones are answered ahead of it, byte for byte alike`, async () => {
      tokens[type] = await fresh[type]();
      const first = await viaServer(t, me(tokens[type]));
      expect(first.fast).toBe(false);
      const fast = await viaServer(t, me(tokens[type]));
      expect(fast.fast).toBe(true);
      const framework = await t.app.inject(me(tokens[type]));
      expect(framework.statusCode).toBe(200);
      expect(comparable(fast.res)).toEqual(comparable(framework));
      expect(comparable(first.res)).toEqual(comparable(framework));
      // The per-response headers are there too, with the same form.
      expect(fast.res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(fast.res.headers.ratelimit).toMatch(/^"credential";r=\d+;t=\d+$/);
      expect(fast.res.headers['content-length']).toBe(String(Buffer.byteLength(fast.res.body)));
      expect((fast.res.json() as { auth: { type: string } }).auth.type).toBe(type);
    });
  }

  it('counts each request once against the credential limit, in both paths', async () => {
    const remaining = async (fast: boolean) => {
      const r = await viaServer(t, me(tokens.api_token));
      expect(r.fast).toBe(fast);
      return Number(/r=(\d+)/.exec(String(r.res.headers.ratelimit))?.[1]);
    };
    const a = await remaining(true);
    expect(await remaining(true)).toBe(a - 1);
    const framework = await t.app.inject(me(tokens.api_token));
    expect(framework.headers.ratelimit).toMatch(new RegExp(`^"credential";r=${a - 2};`));
    expect(await remaining(true)).toBe(a - 3);
  });

  it('writes the same access line as Fastify does', async () => {
    const from = (await t.settledLogs()).length;
    const fast = await viaServer(t, { ...me(tokens.api_token), remoteAddress: '203.0.113.9' });
    expect(fast.fast).toBe(true);
    await t.app.inject({ ...me(tokens.api_token), remoteAddress: '203.0.113.9' });
    const lines = (await t.settledLogs())
      .slice(from)
      .join('')
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    const [a, b] = lines as [Record<string, unknown>, Record<string, unknown>];
    expect(Object.keys(a)).toEqual(Object.keys(b));
    const stable = (line: Record<string, unknown>) => Object.fromEntries(Object.entries(line).filter(([key]) => !['time', 'ms', 'request_id'].includes(key)));
    expect(stable(a)).toEqual(stable(b));
    expect(a).toMatchObject({ method: 'GET', url: '/api/me', status: 200, remote: '203.0.113.9', auth: 'api_token', request_id: fast.res.headers['x-request-id'] });
  });

  it('leaves everything else to Fastify: other methods, query strings, other schemes, malformed and unknown tokens', async () => {
    const cases = [
      { method: 'HEAD' as const, url: '/api/me', headers: bearer(tokens.api_token) },
      { method: 'GET' as const, url: '/api/me?x=1', headers: bearer(tokens.api_token) },
      { method: 'GET' as const, url: '/api/me/', headers: bearer(tokens.api_token) },
      { method: 'GET' as const, url: '/api/me', headers: { authorization: `Basic ${tokens.api_token}` } },
      { method: 'GET' as const, url: '/api/me', headers: bearer(`${tokens.api_token}x`) },
      { method: 'GET' as const, url: '/api/me', headers: bearer(flip(tokens.api_token, -1)) },
      { method: 'GET' as const, url: '/api/me', headers: {} },
    ];
    const statuses: number[] = [];
    for (const options of cases) {
      const r = await viaServer(t, options);
      expect(r.fast, options.url).toBe(false);
      statuses.push(r.res.statusCode);
    }
    expect(statuses).toEqual([200, 200, 404, 401, 401, 401, 401]);
  });

  it('a revoked token is refused on the very next request, which the cache no longer vouches for', async () => {
    const created = await createApiToken(t, user.jwt);
    await viaServer(t, me(created.token));
    expect((await viaServer(t, me(created.token))).fast).toBe(true);
    expect((await json(t, 'DELETE', `/api/tokens/${created.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const after = await viaServer(t, me(created.token));
    expect(after.fast).toBe(false);
    expectProblem(after.res, 401, 'invalid_token');
    expect(after.res.headers['www-authenticate']).toBe('Bearer realm="rz", error="invalid_token"');
  });

  it('a logged-out JWT is refused on the very next request', async () => {
    const session = await signup(t);
    expect((await viaServer(t, me(session.jwt))).res.statusCode).toBe(200);
    expect((await viaServer(t, me(session.jwt))).fast).toBe(true);
    expect((await json(t, 'POST', '/api/auth/logout', undefined, session.jwt)).statusCode).toBe(204);
    const after = await viaServer(t, me(session.jwt));
    expect(after.fast).toBe(false);
    expectProblem(after.res, 401, 'invalid_token');
  });
});

describe('GET /api/me fast path and the rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '2/60' } });
  });
  afterAll(() => t.close());

  it('hands a refused request to Fastify, counted once: 429 with Retry-After and the RateLimit fields', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    expect((await viaServer(t, me(token))).fast).toBe(false);
    const second = await viaServer(t, me(token));
    expect(second.fast).toBe(true);
    expect(second.res.headers.ratelimit).toMatch(/^"credential";r=0;/);
    const third = await viaServer(t, me(token));
    expect(third.fast).toBe(false);
    expectProblem(third.res, 429, 'rate_limited');
    expect(Number(third.res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(third.res.headers['ratelimit-policy']).toBe('"credential";q=2;w=60');
    expect(third.res.headers.ratelimit).toMatch(/^"credential";r=0;t=\d+$/);
  });
});

describe('GET /api/me fast path when the rate-limit store fails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '100/60' } });
  });
  afterAll(() => t.close());

  it('hands the request to Fastify, which answers 503 unavailable with Retry-After, not a 500 and not a 200', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    expect((await viaServer(t, me(token))).res.statusCode).toBe(200);
    expect((await viaServer(t, me(token))).fast).toBe(true);
    // The store going away (the in-process store cannot fail, so its failure is what is stood in for).
    const limiter = t.services.rateLimiter;
    const count = limiter.count.bind(limiter);
    limiter.count = (policy, key, decided, failed) =>
      policy === 'credential' ? failed(new ProblemError('unavailable', { headers: { 'retry-after': '5' } })) : count(policy, key, decided, failed);
    try {
      const { res, fast } = await viaServer(t, me(token));
      expect(fast).toBe(false);
      expectProblem(res, 503, 'unavailable');
      expect(res.headers['retry-after']).toBe('5');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    } finally {
      limiter.count = count;
    }
    expect((await viaServer(t, me(token))).fast).toBe(true);
  });
});

describe('GET /api/me fast path behind a proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: '1' } });
  });
  afterAll(() => t.close());

  it('logs the client address Fastify would: the one the trusted hop forwarded', async () => {
    const user = await signup(t);
    const forwarded = { 'x-forwarded-for': '192.0.2.1, 198.51.100.20' };
    await viaServer(t, { ...me(user.jwt, forwarded), remoteAddress: '10.0.0.2' });
    const from = (await t.settledLogs()).length;
    expect((await viaServer(t, { ...me(user.jwt, forwarded), remoteAddress: '10.0.0.2' })).fast).toBe(true);
    await t.app.inject({ ...me(user.jwt, forwarded), remoteAddress: '10.0.0.2' });
    const remotes = (await t.settledLogs())
      .slice(from)
      .join('')
      .split('\n')
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => (JSON.parse(l) as { remote: string }).remote);
    expect(remotes).toEqual(['198.51.100.20', '198.51.100.20']);
  });
});

describe('the real server', () => {
  it('keeps Fastify’s server settings and answers GET /api/me over a socket from the fast path', async () => {
    const server = await startRealServer();
    try {
      const { server: http } = server.app;
      expect(http.keepAliveTimeout).toBe(72_000);
      expect(http.requestTimeout).toBe(10_000);
      const user = await signup(server);
      const url = `http://127.0.0.1:${server.port}/api/me`;
      await fetch(url, { headers: bearer(user.jwt) });
      const before = server.app.fastPath.answered;
      const res = await fetch(url, { headers: bearer(user.jwt) });
      expect(res.status).toBe(200);
      expect(server.app.fastPath.answered).toBe(before + 1);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('keep-alive')).toBe('timeout=72');
      expect(((await res.json()) as { id: string }).id).toBe(user.id);
    } finally {
      await server.close();
    }
  });

  it('with a token the cache vouches for, still refuses two Authorization headers and reads other header forms as Fastify does', async () => {
    const server = await startRealServer();
    try {
      const user = await signup(server);
      const send = (headers: string) => rawRequest(server.port, `GET /api/me HTTP/1.1\r\nHost: localhost\r\n${headers}`);
      expect((await send(`Authorization: Bearer ${user.jwt}`)).status).toBe(200);
      const before = server.app.fastPath.answered;
      const twice = await send(`Authorization: Bearer ${user.jwt}\r\nAuthorization: Bearer ${user.jwt}`);
      expect(twice.status).toBe(400);
      expect(JSON.parse(twice.body)).toMatchObject({ code: 'validation_failed' });
      expect(twice.headers['www-authenticate']).toBe('Bearer realm="rz", error="invalid_request"');
      // Valid but unusual forms: scheme casing, extra spaces (RFC 9110 / 6750).
      for (const form of [`bearer ${user.jwt}`, `Bearer   ${user.jwt}`, `BEARER ${user.jwt} `]) {
        expect((await send(`Authorization: ${form}`)).status, form).toBe(200);
      }
      // Not tokens, though they start with one.
      for (const form of [`Bearer ${user.jwt}\u00a0`, `Bearer ${user.jwt} x`, `Bearer ${user.jwt},`, `Bearer\t${user.jwt}`]) {
        expect((await send(`Authorization: ${form}`)).status, form).toBe(401);
      }
      expect(server.app.fastPath.answered).toBe(before);
    } finally {
      await server.close();
    }
  });
});
