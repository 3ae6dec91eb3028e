import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { bearer, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * CORS for the platform's own front-ends (docs/api-clients.md#browsers): exact origins from
 * CORS_ORIGINS, none by default; bearer tokens only, so never Access-Control-Allow-Credentials.
 */
const FRONT_END = 'https://app.example.com';
const OTHER = 'https://evil.example';
const ID = '00000000-0000-4000-8000-000000000000';

const preflight = (t: TestApp, url: string, method: string, origin = FRONT_END) =>
  t.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' } });

describe('CORS with CORS_ORIGINS set', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: `${FRONT_END}, http://localhost:5173` } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('answers the preflight of every operation in the OpenAPI document, ahead of its guard, without credentials', async () => {
    const document = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => [path.replaceAll(/\{[^}]+\}/g, ID), method.toUpperCase()] as const));
    expect(operations.length).toBeGreaterThan(30);
    for (const [url, method] of operations) {
      const res = await preflight(t, url, method);
      expect(res.statusCode, `${method} ${url}`).toBe(204);
      expect(res.headers['access-control-allow-origin'], `${method} ${url}`).toBe(FRONT_END);
      expect(String(res.headers['access-control-allow-methods'])).toContain(method === 'HEAD' ? 'GET' : method);
      expect(res.headers['access-control-allow-headers']).toBe('Authorization, Content-Type');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('a request from a listed origin gets the origin back and may read the headers a front-end needs; success and refusal alike', async () => {
    for (const token of [user.jwt, 'rz_not-a-token']) {
      const res = await t.inject({ method: 'GET', url: '/api/me', headers: { ...bearer(token), origin: FRONT_END } });
      expect(res.headers['access-control-allow-origin']).toBe(FRONT_END);
      expect(res.headers['access-control-expose-headers']).toBe('WWW-Authenticate, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(String(res.headers.vary)).toMatch(/origin/i);
    }
    const refused = await t.inject({ method: 'GET', url: '/api/me', headers: { ...bearer('rz_not-a-token'), origin: FRONT_END } });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ code: 'invalid_token' });
  });

  it('another origin, or an OPTIONS that is no preflight, is answered as without CORS: no Access-Control header, 405', async () => {
    for (const res of [await preflight(t, '/api/tokens', 'POST', OTHER), await t.inject({ method: 'OPTIONS', url: '/api/tokens', headers: { origin: FRONT_END } })]) {
      expect(res.statusCode).toBe(405);
      expect(res.json()).toMatchObject({ code: 'method_not_allowed' });
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
    const read = await t.inject({ method: 'GET', url: '/api/me', headers: { ...bearer(user.jwt), origin: OTHER } });
    expect(read.statusCode).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('the OpenAPI document declares it', async () => {
    const document = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { 'x-cors': unknown; info: { description: string } };
    expect(document['x-cors']).toEqual({ origins: [FRONT_END, 'http://localhost:5173'], credentials: false, exposed_headers: ['WWW-Authenticate', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id'] });
    expect(document.info.description).toContain('CORS_ORIGINS');
  });
});

describe('CORS by default (CORS_ORIGINS empty)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('sends no Access-Control header: a preflight is 405, a read carries none', async () => {
    const pre = await preflight(t, '/api/tokens', 'POST');
    expect(pre.statusCode).toBe(405);
    const read = await t.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { origin: FRONT_END } });
    for (const res of [pre, read]) expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect(((await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { 'x-cors': { origins: string[] } })['x-cors'].origins).toEqual([]);
  });

  it.each(['*', 'null', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://example.com', 'app.example.com'])('CORS_ORIGINS=%s is refused naming the variable', (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/^CORS_ORIGINS must list exact origins/);
  });
});
