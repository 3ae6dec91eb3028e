import { crc32 } from 'node:zlib';
import { derive } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore } from '../../src/changes/store.js';
import { generateToken } from '../../src/lib/token-format.js';
import { createApiToken, expectInvalidToken, expectProblem, flip, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { openEvents } from '../helpers/event-stream.js';
import { createService, introspect } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';

const report = (t: TestApp, body: unknown, remoteAddress = '198.51.100.9') =>
  t.inject({ method: 'POST', url: '/api/tokens/leaked', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body), remoteAddress });

/** What a report's answer may vary in: nothing but the request id. */
const shape = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => name !== 'x-request-id' && name !== 'date'));
  return { status: res.statusCode, body: res.body, headers };
};

/** Contract §9, leak response. */
describe('POST /api/tokens/leaked', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());

  const leakedEvents = async (u: TestUser) =>
    ((await json(t, 'GET', '/api/audit?type=token.leaked', undefined, u.jwt)).json() as { events: Array<Record<string, unknown>> }).events;

  it('revokes every live token among the strings, answering the same 202 whatever matched', async () => {
    const api = await createApiToken(t, user.jwt);
    const app = await registerApp(t, user.jwt);
    const service = await createService(t, 'leaky');
    const nothing = await report(t, { tokens: [generateToken('api'), flip(generateToken('app'), 10), 'ghp_notours', 'hello', ''] });
    const everything = await report(t, { tokens: ['junk', api.token, app.token, service.token, generateToken('service'), `rza_${api.token.slice(3)}`] });
    expect(everything.statusCode).toBe(202);
    expect(everything.json()).toEqual({ status: 'received' });
    expect(shape(everything)).toEqual(shape(nothing));

    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, api.token));
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token));
    expect((await introspect(t, service.token, api.token)).statusCode).toBe(401);
    // Once dead, a second report changes nothing and still answers the same.
    expect(shape(await report(t, { tokens: [api.token] }))).toEqual(shape(nothing));
  });

  it('tells the owner: a token.leaked event, from an anonymous reporter, with no value in it', async () => {
    const owner = await signup(t);
    const api = await createApiToken(t, owner.jwt, { name: 'oops' });
    const app = await registerApp(t, owner.jwt);
    const res = await report(t, { tokens: [api.token, app.token, api.token] });
    const [appEvent, apiEvent, ...more] = await leakedEvents(owner);
    expect(more).toEqual([]);
    expect(apiEvent).toMatchObject({
      type: 'token.leaked',
      actor: { type: 'anonymous', id: null },
      subject: { type: 'token', id: api.id },
      ip: '198.51.100.9',
      request_id: res.headers['x-request-id'],
      details: { token_type: 'api_token', hint: `rz_${api.token.slice(-4)}`, report_format: 'list' },
    });
    expect(appEvent).toMatchObject({ subject: { type: 'token', id: app.token_id }, details: { token_type: 'app_token', app_id: app.id, report_format: 'list' } });
    expect(JSON.stringify([appEvent, apiEvent])).not.toContain(api.token);
  });

  it('records a leaked service credential as nobody\'s event, for the operator', async () => {
    const service = await createService(t, 'scoreboard-leaked');
    await report(t, { tokens: [service.token] });
    const [event] = await t.services.audit.list({ limit: 1, type: 'token.leaked' });
    expect(event).toMatchObject({ userId: null, subject: { type: 'service_credential', id: service.id }, details: { token_type: 'service_credential' } });
    expect((await t.services.serviceCredentials.list()).map((c) => c.id)).not.toContain(service.id);
  });

  it('takes the array GitHub secret scanning sends', async () => {
    const owner = await signup(t);
    const api = await createApiToken(t, owner.jwt);
    const res = await report(t, [
      { token: api.token, type: 'rz_api_token', url: 'https://github.com/octo/repo/blob/abc/config.yml', source: 'content' },
      { token: 'rz_not_a_token', type: 'rz_api_token', url: 'https://example.com', source: 'content' },
    ]);
    expect(res.statusCode).toBe(202);
    expectInvalidToken(await json(t, 'GET', '/api/me', undefined, api.token));
    const [event] = await leakedEvents(owner);
    expect(event?.details).toEqual({ token_type: 'api_token', name: 'test token', hint: `rz_${api.token.slice(-4)}`, report_format: 'github' });
    // Where it was found is the reporter's word, and anyone can report: not recorded.
    expect(JSON.stringify(event)).not.toContain('github.com');
  });

  it('leaves expired and already revoked tokens alone: no event', async () => {
    const owner = await signup(t);
    const revoked = await createApiToken(t, owner.jwt);
    expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, owner.jwt)).statusCode).toBe(204);
    expect((await report(t, { tokens: [revoked.token] })).statusCode).toBe(202);
    expect(await leakedEvents(owner)).toEqual([]);
  });

  it('announces each revocation through the change log, as token.revoked for the event stream', async () => {
    const changes = new ChangeStore(t.services.database.db);
    const before = await changes.latestId();
    const api = await createApiToken(t, user.jwt);
    await report(t, { tokens: [api.token] });
    expect((await changes.listAfter(before)).map((c) => c.event)).toEqual([{ type: 'token.revoked', data: { token_id: api.id, token_type: 'api_token', user_id: user.id } }]);
  });

  it('a report holding a user JWT (over 256 characters) was refused whole, its API tokens left live: now they are revoked and the JWT ignored', async () => {
    const api = await createApiToken(t, user.jwt);
    expect(user.jwt.length).toBeGreaterThan(256);
    expect((await report(t, { tokens: [user.jwt, api.token] })).statusCode).toBe(202);
    expect((await json(t, 'GET', '/api/me', undefined, api.token)).statusCode).toBe(401);
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
  });

  it('refuses more than 100 strings, an empty report, a string over 4,096 characters or an unknown field: 400, nothing revoked', async () => {
    const api = await createApiToken(t, user.jwt);
    const many = Array.from({ length: 100 }, () => 'x');
    expectProblem(await report(t, { tokens: [...many, api.token] }), 400, 'validation_failed');
    expectProblem(await report(t, [...many, api.token].map((token) => ({ token }))), 400, 'validation_failed');
    expectProblem(await report(t, { tokens: [] }), 400, 'validation_failed');
    expectProblem(await report(t, { tokens: [api.token, 'x'.repeat(4097)] }), 400, 'validation_failed');
    expectProblem(await report(t, { tokens: [api.token], note: 'hi' }), 400, 'validation_failed');
    expectProblem(await report(t, [{ token: api.token, extra: 1 }]), 400, 'validation_failed');
    expectProblem(await report(t, 'rz_'), 400, 'validation_failed');
    // Regression: each branch of the body's union reported its errors, so a list of 101 strings was
    // also told "body: must be an array" and "body: is not one of the allowed values".
    const errorsOf = async (sent: unknown) => expectProblem(await report(t, sent), 400, 'validation_failed').errors;
    expect(await errorsOf({ tokens: [...many, 'y'] })).toEqual([{ field: 'tokens', message: 'must have at most 100 items' }]);
    expect(await errorsOf({ tokens: [] })).toEqual([{ field: 'tokens', message: 'must have at least 1 item' }]);
    expect(await errorsOf({ tokens: ['x'], source: 'y' })).toEqual([{ field: 'source', message: 'is not a known field' }]);
    expect(await errorsOf([{ token: 5 }])).toEqual([{ field: '0.token', message: 'must be a string' }]);
    expect(await errorsOf('rz_')).toEqual([{ field: 'body', message: 'is not one of the allowed values' }]);
    expect((await json(t, 'GET', '/api/me', undefined, api.token)).statusCode).toBe(200);
    // Exactly 100 is fine.
    expect((await report(t, { tokens: [...many.slice(1), api.token] })).statusCode).toBe(202);
  });
});

describe('the leak-report rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'on', RATE_LIMIT_LEAK_REPORT: '2/60' } });
  });
  afterAll(() => t.close());

  it('limits reports per client address under its own policy: 429 with Retry-After', async () => {
    const first = await report(t, { tokens: ['a'] }, '198.51.100.20');
    expect(first.statusCode).toBe(202);
    expect(first.headers['ratelimit-policy']).toBe('"leak-report";q=2;w=60');
    expect((await report(t, { tokens: ['a'] }, '198.51.100.20')).statusCode).toBe(202);
    const limited = expectProblem(await report(t, { tokens: ['a'] }, '198.51.100.20'), 429, 'rate_limited');
    expect(limited).toBeDefined();
    expect((await report(t, { tokens: ['a'] }, '198.51.100.20')).headers['retry-after']).toMatch(/^\d+$/);
    expect((await report(t, { tokens: ['a'] }, '198.51.100.21')).statusCode).toBe(202);
  });
});

describe('a leak report reaches the platform\'s event streams', () => {
  let server: RealServer;
  beforeAll(async () => {
    server = await startRealServer();
  });
  afterAll(() => server.close());

  it('sends token.revoked to an open stream', async () => {
    const user = await signup(server);
    const api = await createApiToken(server, user.jwt);
    const service = await createService(server);
    const reader = await openEvents(server.url, service.token);
    try {
      await reader.next();
      expect((await report(server, { tokens: [api.token] })).statusCode).toBe(202);
      const event = await reader.nextEvent();
      expect(event.event).toBe('token.revoked');
      expect(JSON.parse(event.data ?? '')).toEqual({ token_id: api.id, token_type: 'api_token', user_id: user.id });
    } finally {
      reader.close();
    }
  });
});

describe('GET /.well-known/rz-token-formats.json', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('publishes each prefix, its expressions and the checksum rule, enough to check a token without us', async () => {
    const res = await json(t, 'GET', '/.well-known/rz-token-formats.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      formats: Array<{ type: string; prefix: string; length: number; regex: string; pattern: string }>;
      checksum: { algorithm: string; alphabet: string; length: number };
      report_url: string;
    };
    expect(doc.formats.map((f) => [f.type, f.prefix, f.length])).toEqual([
      ['api_token', 'rz_', 52],
      ['app_token', 'rza_', 53],
      ['service_credential', 'rzs_', 53],
      ['derived_token', 'rzd_', undefined],
    ]);
    expect(doc.report_url).toBe('/api/tokens/leaked');
    // A scanner's own check, written from the document alone.
    const base62 = (n: number) => Array.from({ length: doc.checksum.length }, (_, i) => doc.checksum.alphabet[Math.floor(n / 62 ** (doc.checksum.length - 1 - i)) % 62]).join('');
    const valid = (s: string) => base62(crc32(s.slice(0, -doc.checksum.length))) === s.slice(-doc.checksum.length);
    for (const [format, kind] of doc.formats.slice(0, 3).map((f, i) => [f, (['api', 'app', 'service'] as const)[i]] as const)) {
      const token = generateToken(kind ?? 'api');
      expect(new RegExp(format.pattern).test(token)).toBe(true);
      expect(`config: ${token}\n`.match(new RegExp(format.regex, 'g'))).toEqual([token]);
      expect(valid(token)).toBe(true);
      expect(valid(flip(token, 8))).toBe(false);
    }
    // Derived children (contract §14.4): variable length, base64url, the same checksum rule.
    const derived = doc.formats[3] as { kind?: string; regex: string; pattern: string; checksum?: string };
    expect(derived).toMatchObject({ kind: 'derived', regex: 'rzd_[A-Za-z0-9_-]{140,4092}', checksum: 'last 6 characters: base62 CRC32 of the rest' });
    const child = derive(generateToken('api'), { ttl: 60, scopes: ['apps:read'], aud: ['rz-auth'], cidrs: ['192.0.2.0/24'], label: 'ci run 1' });
    expect(new RegExp(derived.pattern).test(child)).toBe(true);
    expect(`x ${child}\n`.match(new RegExp(derived.regex, 'g'))).toEqual([child]);
    expect(valid(child)).toBe(true);
    expect(valid(flip(child, 10))).toBe(false);
  });
});
