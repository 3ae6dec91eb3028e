import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import {
  createApiToken,
  expectInsufficientScope,
  expectInvalidToken,
  expectProblem,
  expectUnauthorized,
  INVALID_TOKEN_CHALLENGE,
  json,
  login,
  REALM,
  registerApp,
  signup,
  type TestUser,
} from '../helpers/api.js';
import { rawRequest, type RealServer, startRealServer } from '../helpers/real-server.js';

/**
 * Security family 2, the Authorization header: the RFC 6750 table of the contract (section 2) for
 * every way a client can get the header wrong. `{jwt}`, `{api}` and `{app}` stand for valid tokens.
 */

const INVALID_REQUEST_CHALLENGE = `${REALM}, error="invalid_request"`;
/** Headers that differ between any two responses by design (RateLimit counts down). */
const VARYING_HEADERS = new Set(['date', 'x-request-id', 'ratelimit']);

/** No usable credentials: 401 unauthorized with the bare challenge. */
const UNAUTHORIZED: Array<[string, string | null]> = [
  ['absent', null],
  ['empty', ''],
  ['spaces only', '   '],
  ['a tab only', '\t'],
  ['Basic', 'Basic dXNlcjpwYXNzd29yZA=='],
  ['Basic carrying a valid token', 'Basic {api}'],
  ['Token', 'Token {api}'],
  ['Digest', 'Digest username="ada", realm="rz", nonce="n", uri="/api/me", response="r"'],
  ['OAuth', 'OAuth {jwt}'],
  ['a bare API token', '{api}'],
  ['a bare JWT', '{jwt}'],
  ['the scheme glued to the token', 'Bearer{api}'],
  ['a longer scheme name', 'Bearerx {api}'],
  ['a colon after the scheme', 'Bearer: {api}'],
  ['an equals sign after the scheme', 'Bearer={api}'],
  // RFC 6750 §2.1: `Bearer 1*SP b64token`. A tab is optional whitespace around a field value only.
  ['a tab between scheme and token', 'Bearer\t{api}'],
];

/** A Bearer header whose token is malformed: 401 invalid_token. */
const INVALID_TOKEN: Array<[string, string]> = [
  ['Bearer and nothing else', 'Bearer'],
  ['Bearer and a space', 'Bearer '],
  ['Bearer and spaces', 'Bearer    '],
  ['trailing junk', 'Bearer {api} junk'],
  ['a trailing comma', 'Bearer {api},'],
  ['a second scheme after a comma', 'Bearer {api}, Basic eDp5'],
  ['a trailing semicolon', 'Bearer {api};'],
  ['two tokens', 'Bearer {jwt} {api}'],
  ['a token twice, glued', 'Bearer {api}{api}'],
  ['a quoted token', 'Bearer "{api}"'],
  ['an auth-param instead of a token', 'Bearer token="{api}"'],
  ['"=" inside the token', 'Bearer {api}=x'],
  ['the scheme twice', 'Bearer Bearer {api}'],
  ['a trailing no-break space', 'Bearer {api}\u00a0'],
  ['a trailing vertical tab', 'Bearer {api}\u000b'],
  ['a space and a tab between scheme and token', 'Bearer \t{api}'],
  ['a trailing newline', 'Bearer {api}\n'],
  ['a trailing NUL', 'Bearer {app}\u0000'],
  ['a JWT with an extra segment', 'Bearer {jwt}.e30'],
  ['5000 characters', `Bearer ${'a'.repeat(5000)}`],
  ['a 5000-character JWT-shaped value', `Bearer eyJ${'A'.repeat(4997)}`],
  ['a well-formed token nobody issued', `Bearer ${generateToken('api')}`],
  ['a token with a bad checksum', `Bearer rz_${'A'.repeat(49)}`],
];

describe('the Authorization header', () => {
  let t: TestApp;
  let user: TestUser;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
    tokens.jwt = user.jwt;
    tokens.api = (await createApiToken(t, user.jwt)).token;
    tokens.app = (await registerApp(t, user.jwt)).token;
  });
  afterAll(() => t.close());

  const fill = (value: string) => value.replace(/\{(jwt|api|app)\}/g, (_, kind: string) => tokens[kind] ?? '');
  const me = (authorization: string | null, url = '/api/me') =>
    t.inject({ method: 'GET', url, headers: authorization === null ? {} : { authorization: fill(authorization) } });

  it.each(UNAUTHORIZED)('%s: 401 unauthorized', async (_what, header) => {
    expectUnauthorized(await me(header));
  });

  it.each(INVALID_TOKEN)('%s: 401 invalid_token', async (_what, header) => {
    expectInvalidToken(await me(header));
  });

  const ACCEPTED = ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) =>
    (['jwt', 'api', 'app'] as const).map((kind): [string, string] => [`${scheme} {${kind}}`, kind]),
  );
  it.each(ACCEPTED)('%s: 200, the scheme is case-insensitive', async (header, kind) => {
    const res = await me(header);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ auth: { type: { jwt: 'user', api: 'api_token', app: 'app_token' }[kind] } });
  });

  it.each([
    ['two spaces (1*SP)', 'Bearer  {api}'],
    ['many spaces (1*SP)', 'Bearer        {api}'],
    ['optional whitespace around the value', ' \tBearer {api}\t '],
  ])('%s: 200', async (_what, header) => {
    expect((await me(header)).statusCode).toBe(200);
  });

  describe('tokens anywhere but the Authorization header are never read', () => {
    it.each(['/api/me?access_token={api}', '/api/me?access_token={jwt}', '/api/me?token={app}', '/api/tokens?access_token={jwt}'])(
      'query string %s: 401 unauthorized',
      async (url) => expectUnauthorized(await me(null, fill(url))),
    );

    it.each([
      ['cookie', 'access_token={api}'],
      ['cookie', 'token={jwt}; session={jwt}'],
      ['cookie', 'Authorization=Bearer%20{app}'],
      ['x-api-key', '{api}'],
      ['x-auth-token', '{jwt}'],
      ['x-access-token', '{api}'],
      ['proxy-authorization', 'Bearer {api}'],
      ['authentication', 'Bearer {jwt}'],
    ])('%s: %s: 401 unauthorized', async (header, value) => {
      expectUnauthorized(await t.inject({ method: 'GET', url: '/api/me', headers: { [header]: fill(value) } }));
    });

    it('a form-encoded access_token (RFC 6750 §2.2): 401 unauthorized, nothing created', async () => {
      const payload = `access_token=${encodeURIComponent(user.jwt)}&name=x`;
      const res = await t.inject({ method: 'POST', url: '/api/apps', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload });
      expectUnauthorized(res);
      expect((await json(t, 'GET', '/api/apps', undefined, user.jwt)).json()).toMatchObject({ apps: [{ name: 'Test App' }] });
    });
  });

  it('the RFC 6750 table: unauthorized, invalid_token and insufficient_scope rows', async () => {
    const none = await me(null);
    expectProblem(none, 401, 'unauthorized');
    expect(none.headers['www-authenticate']).toBe('Bearer realm="rz"');
    const bad = await me('Bearer not-a-token');
    expectProblem(bad, 401, 'invalid_token');
    expect(bad.headers['www-authenticate']).toBe('Bearer realm="rz", error="invalid_token"');
    expectInsufficientScope(await json(t, 'POST', '/api/tokens', { name: 'x' }, tokens.api), '*');
    expectInsufficientScope(await json(t, 'GET', '/api/tokens', undefined, tokens.api), 'tokens:read');
  });

  it('every invalid_token response is byte-identical apart from request_id', async () => {
    const revoked = await createApiToken(t, user.jwt);
    expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const loggedOut = await login(t, user.email);
    expect((await json(t, 'POST', '/api/auth/logout', undefined, loggedOut)).statusCode).toBe(204);
    const signature = tokens.jwt?.split('.')[2] ?? '';
    const headers = [
      ...INVALID_TOKEN.map(([, header]) => header),
      `Bearer ${revoked.token}`,
      `Bearer ${loggedOut}`,
      `Bearer ${fill('{jwt}').slice(0, -signature.length)}${[...signature].reverse().join('')}`,
      `Bearer ${generateToken('app')}`,
    ];
    const responses = await Promise.all(headers.map((header) => me(header)));
    const shapes = responses.map((res: LightMyRequestResponse) => {
      expectInvalidToken(res);
      const headers = Object.entries(res.headers).filter(([name]) => !VARYING_HEADERS.has(name));
      return { headers: Object.fromEntries(headers), body: res.body.replace(String(res.headers['x-request-id']), '<id>') };
    });
    expect(new Set(shapes.map((s) => JSON.stringify(s))).size, JSON.stringify(shapes[0])).toBe(1);
    expect(shapes[0]?.headers['www-authenticate']).toBe(INVALID_TOKEN_CHALLENGE);
  });
});

describe('the Authorization header over a real socket', () => {
  let server: RealServer;
  let token: string;

  beforeAll(async () => {
    server = await startRealServer();
    token = (await createApiToken(server, (await signup(server)).jwt)).token;
  });
  afterAll(() => server.close());

  const get = (...headerLines: string[]) => rawRequest(server.port, ['GET /api/me HTTP/1.1', 'Host: localhost', ...headerLines].join('\r\n'));

  it('one valid header: 200', async () => {
    expect((await get(`Authorization: Bearer ${token}`)).status).toBe(200);
  });

  it.each([
    ['the same valid token twice', ['Authorization: Bearer {t}', 'Authorization: Bearer {t}']],
    ['a valid token, then junk', ['Authorization: Bearer {t}', 'Authorization: Basic eDp5']],
    ['junk, then a valid token', ['Authorization: Basic eDp5', 'Authorization: Bearer {t}']],
    ['an empty header, then a valid token', ['Authorization:', 'Authorization: Bearer {t}']],
    ['two spellings of the name', ['authorization: Bearer {t}', 'AUTHORIZATION: Bearer {t}']],
    // Regression: Node kept only the first 2,000 raw header lines, so a second header past them went unseen.
    ['a valid token, 1,100 other headers, then another', ['Authorization: Bearer {t}', ...Array.from({ length: 1100 }, (_, i) => `X-${i}: 1`), 'Authorization: Bearer {t}']],
  ])('%s: 400 validation_failed with error="invalid_request"', async (_what, lines) => {
    const res = await get(...lines.map((line) => line.replace('{t}', token)));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['www-authenticate']).toBe(INVALID_REQUEST_CHALLENGE);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ field: 'authorization', message: expect.any(String) }] });
    expect(body.request_id).toBe(res.headers['x-request-id']);
  });

  it("a header over Node's limit is a 431 problem, and the server keeps serving", async () => {
    const res = await get(`Authorization: Bearer ${'a'.repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(res.body)).toMatchObject({ status: 431, code: 'headers_too_large', request_id: res.headers['x-request-id'] });
    expect(res.body).not.toContain('aaaaaaaa');
    expect((await get(`Authorization: Bearer ${token}`)).status).toBe(200);
  });

  it('a request line Node cannot parse is a 400 problem that names the request (its errors array was missing)', async () => {
    const res = await rawRequest(server.port, 'GET /api/me HTTP/9.9\r\nHost: localhost\r\nBad Header Name: x');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'validation_failed', errors: [{ field: 'request', message: 'is not valid HTTP' }] });
  });
});
