import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PROBLEMS } from '../../src/errors.js';
import { SECURITY_HEADERS } from '../../src/http/headers.js';
import { expectProblem } from '../helpers/api.js';
import { type TestApp, startTestApp } from '../helpers/app.js';

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
  requestBody?: unknown;
  summary?: string;
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>> };

const OPERATIONS: Array<[string, string, boolean]> = [
  ['post', '/api/auth/signup', false],
  ['post', '/api/auth/login', false],
  ['post', '/api/auth/mfa/verify', false],
  ['post', '/api/auth/reauth', true],
  ['post', '/api/auth/mfa/webauthn/options', false],
  ['post', '/api/auth/passkey/options', false],
  ['post', '/api/auth/passkey/login', false],
  ['post', '/api/auth/reauth/webauthn/options', true],
  ['post', '/api/me/mfa/webauthn/options', true],
  ['post', '/api/me/mfa/webauthn', true],
  ['get', '/api/me/mfa', true],
  ['post', '/api/me/mfa/totp', true],
  ['post', '/api/me/mfa/totp/{factor_id}/confirm', true],
  ['patch', '/api/me/mfa/{id}', true],
  ['delete', '/api/me/mfa/{id}', true],
  ['post', '/api/me/mfa/recovery-codes', true],
  ['post', '/api/auth/logout', true],
  ['post', '/api/auth/verify-email', true],
  ['post', '/api/auth/verify-email/confirm', false],
  ['post', '/api/auth/password-reset', false],
  ['post', '/api/auth/password-reset/confirm', false],
  ['post', '/api/me/email', true],
  ['post', '/api/me/email/confirm', false],
  ['post', '/api/auth/password', true],
  ['get', '/api/auth/sessions', true],
  ['delete', '/api/auth/sessions', true],
  ['delete', '/api/auth/sessions/{id}', true],
  ['delete', '/api/me', true],
  ['get', '/api/me', true],
  ['post', '/api/tokens', true],
  ['get', '/api/tokens', true],
  ['delete', '/api/tokens/{id}', true],
  ['get', '/api/tokens/{id}', true],
  ['patch', '/api/tokens/{id}', true],
  ['post', '/api/tokens/{id}/rotate', true],
  ['get', '/api/apps/{id}/tokens', true],
  ['post', '/api/apps', true],
  ['get', '/api/apps', true],
  ['get', '/api/apps/{id}', true],
  ['delete', '/api/apps/{id}', true],
  ['post', '/api/apps/{id}/tokens', true],
  ['get', '/api/scopes', false],
  ['post', '/api/introspect', true],
  ['get', '/api/events', true],
  ['get', '/api/audit', true],
  ['post', '/api/webhooks', true],
  ['get', '/api/webhooks', true],
  ['get', '/api/webhooks/event-types', true],
  ['get', '/api/webhooks/{id}', true],
  ['delete', '/api/webhooks/{id}', true],
  ['get', '/api/webhooks/{id}/deliveries', true],
  ['post', '/api/webhooks/{id}/test', true],
  ['post', '/api/tokens/leaked', false],
  ['get', '/.well-known/rz-token-formats.json', false],
  ['get', '/.well-known/jwks.json', false],
  ['get', '/healthz', false],
  ['get', '/readyz', false],
  ['get', '/.well-known/oauth-authorization-server', false],
  ['post', '/oauth/device_authorization', false],
  ['post', '/oauth/token', false],
  ['post', '/oauth/revoke', false],
  ['post', '/api/device/lookup', true],
  ['post', '/api/device/approve', true],
  ['post', '/api/device/deny', true],
];

describe('OpenAPI document and docs', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json() as Doc;
  });
  afterAll(() => t.close());

  it('is OpenAPI 3.1 with the four bearer security schemes and the Problem schema', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes ?? {}).sort()).toEqual(['apiToken', 'appToken', 'serviceToken', 'userToken']);
    expect(doc.components.schemas).toHaveProperty('Problem');
  });

  it.each(OPERATIONS)('documents %s %s with its responses and security', (method, path, protectedRoute) => {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    if (!op) return;
    expect(op.summary).toBeTruthy();
    const statuses = Object.keys(op.responses);
    expect(statuses.some((s) => s.startsWith('2'))).toBe(true);
    if (protectedRoute) {
      expect(op.security?.length).toBeGreaterThan(0);
      expect(statuses).toContain('401');
    }
  });

  it('documents only the contract operations (no internal routes leak in)', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual(OPERATIONS.map(([m, p]) => `${m} ${p}`).sort());
  });

  // Regression: `email` was declared `format: email`, which allows ASCII only, while signup accepts
  // and answers addresses with non-ASCII letters: a client validating responses refused a real 201.
  it('the overview said every request carries a bearer token, though some need none: now it names each operation without security', () => {
    const info = (doc as unknown as { info: { description: string } }).info.description;
    const named: Record<string, string> = {
      'post /api/auth/signup': 'signup',
      'post /api/auth/login': 'login',
      'post /api/auth/mfa/verify': 'second step of a login',
      'post /api/auth/mfa/webauthn/options': 'second step of a login',
      'post /api/auth/passkey/options': 'passkey login',
      'post /api/auth/passkey/login': 'passkey login',
      'post /api/auth/password-reset': 'password reset',
      'post /api/auth/password-reset/confirm': 'links mailed for it',
      'post /api/auth/verify-email/confirm': 'email verification',
      'post /api/me/email/confirm': 'email change',
      'get /api/scopes': 'scope list',
      'post /api/tokens/leaked': 'leak reports',
      'get /.well-known/rz-token-formats.json': 'token formats',
      'get /.well-known/jwks.json': 'key set',
      'get /.well-known/oauth-authorization-server': 'OAuth endpoints of a device login',
      'post /oauth/device_authorization': 'device authorization',
      'post /oauth/token': 'token',
      'post /oauth/revoke': 'revocation',
      'get /healthz': 'health checks',
      'get /readyz': 'health checks',
    };
    const open = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.security?.length === 0)
        .map(([method]) => `${method} ${path}`),
    );
    expect(open.sort()).toEqual(Object.keys(named).sort());
    for (const words of Object.values(named)) expect(info).toContain(words);
    expect(info).not.toMatch(/every request carries/i);
  });

  it('declares email as idn-email, which admits the non-ASCII address signup answers', async () => {
    type Created = { content: { 'application/json': { schema: { properties: { user: { properties: { email: { format: string } } } } } } } };
    const user = (doc.paths['/api/auth/signup']?.post?.responses['201'] as Created).content['application/json'].schema.properties.user;
    expect(user.properties.email.format).toBe('idn-email');
    const email = `ü-${Date.now()}@exämple.org`;
    const res = await t.inject({ method: 'POST', url: '/api/auth/signup', payload: { email, username: `idn_${Date.now()}`, password: 'a long enough passphrase' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ user: { email } });
  });

  it('lists every error code in the Problem schema', () => {
    const text = JSON.stringify(doc.components.schemas?.Problem);
    for (const code of Object.keys(PROBLEMS)) expect(text).toContain(code);
  });

  it('serves a docs page at /docs and one page per problem type', async () => {
    const docs = await t.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
    for (const code of Object.keys(PROBLEMS)) {
      const page = await t.inject({ method: 'GET', url: `/problems/${code.replaceAll('_', '-')}` });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(code);
    }
  });

  it('the docs page with a query string was blank and index.html with one redirected to itself: both go to the plain page', async () => {
    for (const url of ['/docs?x=1', '/docs/?x', '/docs/static/index.html', '/docs/static/index.html?x', '/docs/static/index.html?']) {
      const res = await t.inject({ method: 'GET', url });
      expect([url, res.statusCode, res.headers.location]).toEqual([url, 302, '/docs/']);
    }
    for (const url of ['/docs', '/docs/']) expect((await t.inject({ method: 'GET', url })).statusCode).toBe(200);
    expect((await t.inject({ method: 'GET', url: '/docs/static/swagger-ui.css?v=1' })).statusCode).toBe(200);
  });
});

/** The three addresses the document is served at, and the type each is sent as. */
const DOCUMENT_ROUTES = [
  ['/openapi.json', 'application/json; charset=utf-8'],
  ['/docs/json', 'application/json; charset=utf-8'],
  ['/docs/yaml', 'application/x-yaml'],
] as const;

describe('serving the document', () => {
  it('/openapi.json, /docs/json and /docs/yaml serialised the 238 KB document again on every request: now each sends the bytes fixed when the app was ready', async () => {
    const t = await startTestApp();
    try {
      const first = await Promise.all(DOCUMENT_ROUTES.map(([url]) => t.inject({ method: 'GET', url })));
      const generate = vi.spyOn(t.app, 'swagger');
      const stringify = vi.spyOn(JSON, 'stringify');
      try {
        for (const [i, [url, type]] of DOCUMENT_ROUTES.entries()) {
          const res = await t.inject({ method: 'GET', url });
          expect([url, res.statusCode, res.headers['content-type']]).toEqual([url, 200, type]);
          expect(res.headers['x-content-type-options']).toBe(SECURITY_HEADERS['x-content-type-options']);
          expect(res.rawPayload.equals(first[i]?.rawPayload ?? Buffer.alloc(0)), url).toBe(true);
        }
        expect(generate).not.toHaveBeenCalled();
        expect(stringify.mock.calls.filter(([value]) => (value as { openapi?: unknown } | null)?.openapi !== undefined)).toEqual([]);
      } finally {
        stringify.mockRestore();
        generate.mockRestore();
      }
      expect(first[1]?.body).toBe(first[0]?.body);
    } finally {
      await t.close();
    }
  });

  it('the document was served to anyone without limit: each of its addresses now counts against the client address, with the RateLimit fields, and 429 past the limit', async () => {
    const t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '3/60' } });
    try {
      for (const [i, [url]] of DOCUMENT_ROUTES.entries()) {
        const res = await t.inject({ method: 'GET', url });
        expect([url, res.statusCode]).toEqual([url, 200]);
        expect(res.headers['ratelimit-policy']).toBe('"address";q=3;w=60');
        expect(res.headers.ratelimit).toMatch(new RegExp(`^"address";r=${2 - i};t=\\d+$`));
      }
      for (const [url] of DOCUMENT_ROUTES) {
        const refused = await t.inject({ method: 'GET', url });
        expectProblem(refused, 429, 'rate_limited');
        expect(refused.headers['retry-after']).toMatch(/^\d+$/);
        expect(refused.headers.ratelimit).toMatch(/^"address";r=0;t=\d+$/);
      }
      // Another address has its own budget.
      expect((await t.inject({ method: 'GET', url: '/openapi.json', remoteAddress: '192.0.2.9' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
