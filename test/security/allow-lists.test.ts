import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createApiToken, expectInvalidToken, json, PASSWORD, registerApp, signup, type TestUser } from '../helpers/api.js';
import { comparable } from '../helpers/jwt-craft.js';

/**
 * Family 13 of the security bar, network allow-lists: a refusal is the same 401 invalid_token as
 * any other, byte for byte apart from the request id, on GET /api/me and on any other route; a spoofed X-Forwarded-For cannot move a client inside a list unless the operator
 * trusts the proxy that sent it; parsing edge cases (mapped addresses, /0, zone ids) hold.
 */

const get = (t: TestApp, url: string, token: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers }, remoteAddress });

describe('allow-list refusals', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('are byte-identical to a string that is no token, on GET /api/me and on another route, cached or not', async () => {
    const { token } = await createApiToken(t, user.jwt, { scopes: ['tokens:read'], allowed_cidrs: ['192.0.2.0/24'] });
    for (const url of ['/api/me', '/api/tokens']) {
      const reference = comparable(await get(t, url, 'not-a-token', '198.51.100.1'));
      // The first refusal looks the token up; the next ones are decided from the cache.
      for (let i = 0; i < 3; i++) {
        const refused = await get(t, url, token, '198.51.100.1');
        expectInvalidToken(refused);
        expect(comparable(refused)).toEqual(reference);
      }
      // Positive control: the same token from inside its network.
      expect((await get(t, url, token, '192.0.2.1')).statusCode).toBe(200);
    }
  });

  it('a refused request is not recorded as a use', async () => {
    const created = await createApiToken(t, user.jwt, { allowed_cidrs: ['192.0.2.0/24'] });
    expectInvalidToken(await get(t, '/api/me', created.token, '198.51.100.1'));
    const detail = (await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json();
    expect(detail).toMatchObject({ last_used_at: null, last_used_ip: null });
  });

  it('X-Forwarded-For is ignored without a trusted proxy: a spoofed inside address is refused', async () => {
    const { token } = await createApiToken(t, user.jwt, { allowed_cidrs: ['10.0.0.0/8'] });
    for (const xff of ['10.0.0.1', '10.0.0.1, 10.0.0.2', '198.51.100.1, 10.0.0.1']) {
      expectInvalidToken(await get(t, '/api/me', token, '198.51.100.1', { 'x-forwarded-for': xff }));
    }
    expect((await get(t, '/api/me', token, '10.0.0.1', { 'x-forwarded-for': '198.51.100.1' })).statusCode).toBe(200);
  });

  it('/0 admits its whole family and nothing of the other', async () => {
    const { token } = await createApiToken(t, user.jwt, { allowed_cidrs: ['0.0.0.0/0'] });
    expect((await get(t, '/api/me', token, '203.0.113.9')).statusCode).toBe(200);
    expectInvalidToken(await get(t, '/api/me', token, '2001:db8::1'));
  });

  it('an IPv4 network admits the IPv4-mapped IPv6 form of its addresses, and only those', async () => {
    const { token } = await createApiToken(t, user.jwt, { allowed_cidrs: ['192.0.2.0/24'] });
    expect((await get(t, '/api/me', token, '::ffff:192.0.2.10')).statusCode).toBe(200);
    expectInvalidToken(await get(t, '/api/me', token, '::ffff:192.0.3.10'));
  });

  it('an app token reading its app is refused from outside its networks', async () => {
    const app = await registerApp(t, user.jwt);
    const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['2001:db8::/32'] }, user.jwt)).json();
    expect((await get(t, `/api/apps/${app.id}`, issued.token, '2001:db8::5')).statusCode).toBe(200);
    const reference = comparable(await get(t, `/api/apps/${app.id}`, 'not-a-token', '2001:db9::5'));
    const refused = await get(t, `/api/apps/${app.id}`, issued.token, '2001:db9::5');
    expectInvalidToken(refused);
    expect(comparable(refused)).toEqual(reference);
  });
});

describe('allow-lists behind a trusted proxy', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: '127.0.0.1' } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('the address the proxy reports decides, exactly as for the rate limiter; others cannot speak for the proxy', async () => {
    const { token } = await createApiToken(t, user.jwt, { allowed_cidrs: ['10.0.0.0/8'] });
    expect((await get(t, '/api/me', token, '127.0.0.1', { 'x-forwarded-for': '10.1.1.1' })).statusCode).toBe(200);
    expectInvalidToken(await get(t, '/api/me', token, '127.0.0.1', { 'x-forwarded-for': '198.51.100.1' }));
    // Not the trusted proxy: its X-Forwarded-For is not believed.
    expectInvalidToken(await get(t, '/api/me', token, '198.51.100.2', { 'x-forwarded-for': '10.1.1.1' }));
  });
});

describe('narrowing cannot widen', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());

  it.each([
    ['a wider network', ['10.0.0.0/8'], ['10.0.0.0/7']],
    ['a network of the other family', ['10.0.0.0/8'], ['::/0']],
    ['the mapped form of a wider network', ['10.0.0.0/8'], ['::ffff:0.0.0.0/96']],
    ['one network inside and one outside', ['10.0.0.0/8'], ['10.1.0.0/16', '11.0.0.0/16']],
  ])('%s is refused and the token keeps its list', async (_name, from, to) => {
    const created = await createApiToken(t, user.jwt, { allowed_cidrs: from });
    const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, { allowed_cidrs: to }, user.jwt);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ field: 'allowed_cidrs' })]);
    expect((await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json().allowed_cidrs).toEqual(from);
  });

  it('scopes cannot be added back after a narrowing, nor by a token for itself', async () => {
    const created = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
    expect((await json(t, 'PATCH', `/api/tokens/${created.id}`, { scopes: ['tokens:read'] }, user.jwt)).statusCode).toBe(200);
    expect((await json(t, 'PATCH', `/api/tokens/${created.id}`, { scopes: ['apps:read', 'tokens:read'] }, user.jwt)).statusCode).toBe(400);
    expect((await json(t, 'PATCH', `/api/tokens/${created.id}`, { scopes: ['tokens:read'] }, created.token)).statusCode).toBe(403);
  });

  it('parallel narrowings never combine into a widening: the last one standing is a subset of every earlier result', async () => {
    const created = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
    const results = await Promise.all(
      [['apps:read'], ['apps:write'], ['tokens:read']].map((scopes) => json(t, 'PATCH', `/api/tokens/${created.id}`, { scopes }, user.jwt)),
    );
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of results) expect([200, 400, 409]).toContain(r.statusCode);
    const final = (await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json().scopes as string[];
    expect(final.length).toBeLessThanOrEqual(1);
    // Each successful answer showed a subset of the one before it: whatever ran later could only remove.
    for (const r of ok) expect(final.every((s) => (r.json().scopes as string[]).includes(s))).toBe(true);
  });
});

describe('a forwarded entry that is no address (a proxy passing on what its client wrote)', () => {
  let t: TestApp;
  let user: TestUser;
  const proxy = '127.0.0.1';
  const junk = ['a'.repeat(65), '<img src=x>', 'fe80::1%' + 'x'.repeat(70), '10.1.1.1 10.1.1.2'];
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: '1' } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('was stored as the client address and made the audit log, the sessions and the token detail answer 500: now the proxy is the client', async () => {
    const { id, token } = await createApiToken(t, user.jwt);
    for (const forwarded of junk) {
      const headers = { 'x-forwarded-for': forwarded, 'content-type': 'application/json' };
      const login = await t.inject({ method: 'POST', url: '/api/auth/login', headers, remoteAddress: proxy, payload: { email: user.email, password: 'not the password at all' } });
      expect(login.statusCode).toBe(401);
      const session = await t.inject({ method: 'POST', url: '/api/auth/login', headers, remoteAddress: proxy, payload: { email: user.email, password: PASSWORD } });
      expect(session.statusCode).toBe(200);
      expect((await get(t, '/api/me', token, proxy, { 'x-forwarded-for': forwarded })).statusCode).toBe(200);
    }
    const audit = await json(t, 'GET', '/api/audit?type=login.failed', undefined, user.jwt);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json().events.map(({ ip }: { ip: string }) => ip)).toEqual(junk.map(() => proxy));
    const sessions = await json(t, 'GET', '/api/auth/sessions', undefined, user.jwt);
    expect(sessions.statusCode, sessions.body).toBe(200);
    expect(new Set(sessions.json().sessions.map(({ ip }: { ip: string }) => ip))).toEqual(new Set([proxy]));
    const detail = await json(t, 'GET', `/api/tokens/${id}`, undefined, user.jwt);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json().last_used_ip).toBe(proxy);
  });

  it('was a fresh rate-limit bucket for each value: all count against the proxy', async () => {
    const other = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '3/60' } });
    try {
      const jwks = (forwarded: string) => other.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { 'x-forwarded-for': forwarded }, remoteAddress: '192.0.2.9' });
      for (const forwarded of junk.slice(0, 3)) expect((await jwks(forwarded)).statusCode).toBe(200);
      expect((await jwks(junk[3] as string)).statusCode).toBe(429);
      // Positive control: a real address behind the same proxy has its own bucket.
      expect((await jwks('203.0.113.5')).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  // Regression: proxies that write the client's port (`1.2.3.4:5678`, `[2001:db8::1]:443`) put every
  // client in the proxy's bucket, so one client could use up the login limit of all of them.
  it('an address with a port put every client in the proxy bucket: the port is dropped, each client counts apart', async () => {
    const other = await startTestApp({ env: { TRUST_PROXY: '1', RATE_LIMITS: 'on', RATE_LIMIT_ADDRESS: '2/60' } });
    try {
      const jwks = (forwarded: string) => other.inject({ method: 'GET', url: '/.well-known/jwks.json', headers: { 'x-forwarded-for': forwarded }, remoteAddress: '192.0.2.9' });
      const statuses = async (...forwarded: string[]) => {
        const out: number[] = [];
        for (const f of forwarded) out.push((await jwks(f)).statusCode);
        return out;
      };
      expect(await statuses('198.51.100.1:1111', '198.51.100.1:2222', '198.51.100.1')).toEqual([200, 200, 429]);
      expect(await statuses('[2001:db8:1::1]:443', '[2001:db8:1::2]', '2001:db8:1::3')).toEqual([200, 200, 429]);
      expect(await statuses('198.51.100.2:80', '[2001:db8:2::1]:8080')).toEqual([200, 200]);
      // Still no address: a bracketed IPv4, a port alone, a zone id in brackets; each counts against the proxy.
      expect(await statuses('[198.51.100.3]:80', ':80', '[fe80::1%eth0]:80')).toEqual([200, 200, 429]);
    } finally {
      await other.close();
    }
  });
});
