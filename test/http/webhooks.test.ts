import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { createApiToken, expectInsufficientScope, expectProblem, expectUnauthorized, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  created_at: string;
  secret?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const URL_OK = 'https://93.184.215.14/hooks/rz?key=abc';

/** Contract §9: users' own webhook endpoints (POST/GET/DELETE /api/webhooks), on the default address policy. */
describe('/api/webhooks', () => {
  let t: TestApp;
  let ada: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    ada = await signup(t);
  });
  afterAll(() => t.close());

  const create = (user: TestUser, body: Record<string, unknown>) => json(t, 'POST', '/api/webhooks', { event_types: ['token.created'], ...body }, user.jwt);
  const created = async (user: TestUser, body: Record<string, unknown> = {}): Promise<Endpoint> => {
    const res = await create(user, { url: URL_OK, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Endpoint;
  };
  const fields = (res: Awaited<ReturnType<typeof json>>) => ((expectProblem(res, 400, 'validation_failed').errors ?? []) as Array<{ field: string }>).map((e) => e.field);

  it('adds an endpoint and shows its secret once, never again', async () => {
    const res = await create(ada, { url: URL_OK, event_types: ['token.leaked', 'token.expiring'], description: '  SIEM  ' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as Endpoint;
    expect(body).toMatchObject({ url: URL_OK, description: 'SIEM', event_types: ['token.leaked', 'token.expiring'] });
    expect(body.id).toMatch(UUID);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(body.secret?.slice(6) ?? '', 'base64')).toHaveLength(24);

    const { secret, ...shown } = body;
    const one = await json(t, 'GET', `/api/webhooks/${body.id}`, undefined, ada.jwt);
    expect(one.json()).toEqual(shown);
    const list = await json(t, 'GET', '/api/webhooks', undefined, ada.jwt);
    expect((list.json() as { webhooks: Endpoint[] }).webhooks[0]).toEqual(shown);
    for (const res of [one, list, await json(t, 'GET', `/api/webhooks/${body.id}/deliveries`, undefined, ada.jwt)]) expect(res.body).not.toContain(secret);
  });

  it('lists newest first, deletes (then 404), and records webhook.created and webhook.deleted with the origin only', async () => {
    const user = await signup(t);
    const first = await created(user, { url: 'https://93.184.215.14/a/secret-path' });
    const second = await created(user);
    const list = (await json(t, 'GET', '/api/webhooks', undefined, user.jwt)).json() as { webhooks: Endpoint[] };
    expect(list.webhooks.map((w) => w.id)).toEqual([second.id, first.id]);
    const deleted = await json(t, 'DELETE', `/api/webhooks/${first.id}`, undefined, user.jwt);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expectProblem(await json(t, 'GET', `/api/webhooks/${first.id}`, undefined, user.jwt), 404, 'not_found');
    expectProblem(await json(t, 'DELETE', `/api/webhooks/${first.id}`, undefined, user.jwt), 404, 'not_found');

    const audit = (await json(t, 'GET', '/api/audit?limit=3', undefined, user.jwt)).json() as { events: Array<Record<string, unknown>> };
    const [gone, added] = audit.events;
    expect(gone).toMatchObject({ type: 'webhook.deleted', actor: { type: 'user', id: user.id }, subject: { type: 'webhook', id: first.id } });
    expect(gone?.details).toEqual({ origin: 'https://93.184.215.14', event_types: ['token.created'] });
    expect(added).toMatchObject({ type: 'webhook.created', subject: { type: 'webhook', id: second.id } });
    expect(JSON.stringify(audit)).not.toMatch(/secret-path|whsec_/);
  });

  it.each([
    ['not a URL', 'hooks.example.com/x'],
    ['another scheme', 'ftp://93.184.215.14/x'],
    ['javascript', 'javascript:alert(1)'],
    ['a file', 'file:///etc/passwd'],
    ['a user name and password', 'https://user:pass@93.184.215.14/x'],
    ['a user name', 'https://user@93.184.215.14/x'],
    ['a fragment', 'https://93.184.215.14/x#frag'],
    ['loopback', 'http://127.0.0.1:8080/x'],
    ['loopback elsewhere in 127/8', 'http://127.1.2.3/x'],
    ['loopback, decimal', 'http://2130706433/x'],
    ['loopback, octal', 'http://0177.0.0.1/x'],
    ['loopback, hex', 'http://0x7f.1/x'],
    ['loopback IPv6', 'http://[::1]/x'],
    ['localhost', 'http://localhost:3000/x'],
    ['localhost, upper case and a dot', 'http://LOCALHOST./x'],
    ['a name under localhost', 'https://api.localhost/x'],
    ['this network', 'http://0.0.0.0/x'],
    ['unspecified IPv6', 'http://[::]/x'],
    ['private 10/8', 'http://10.0.0.5/x'],
    ['private 172.16/12', 'https://172.31.255.1/x'],
    ['private 192.168/16', 'https://192.168.1.1/x'],
    ['unique local IPv6', 'https://[fd00::1]/x'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data'],
    ['link-local IPv6', 'http://[fe80::1]/x'],
    ['CGNAT', 'http://100.64.0.1/x'],
    ['multicast', 'http://224.0.0.1/x'],
    ['broadcast', 'http://255.255.255.255/x'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/x'],
    ['IPv4-mapped metadata, hex', 'http://[::ffff:a9fe:a9fe]/x'],
    ['IPv4-compatible private', 'http://[::10.0.0.1]/x'],
    ['NAT64 loopback', 'http://[64:ff9b::7f00:1]/x'],
    ['6to4 private', 'http://[2002:c0a8:101::1]/x'],
    ['too long', `https://93.184.215.14/${'a'.repeat(2048)}`],
    // RFC 6761: names under .invalid never resolve (and the lookup is bounded by a timeout anyway).
    ['a name that does not resolve', 'https://hooks.nothing-here.invalid/x'],
    // Regression: the URL parser dropped these, storing an endpoint other than the one typed.
    ['a leading space', ' https://93.184.215.14/x'],
    ['a trailing NUL', 'https://93.184.215.14/x\u0000'],
    ['a line break inside', 'https://93.184.215.14/a\r\nb'],
    ['a tab inside the host', 'https://93.184.\t215.14/x'],
  ])('refuses %s with 400 naming url, and creates nothing', async (_what, url) => {
    const user = await signup(t);
    expect(fields(await create(user, { url }))).toEqual(['url']);
    expect(((await json(t, 'GET', '/api/webhooks', undefined, user.jwt)).json() as { webhooks: unknown[] }).webhooks).toEqual([]);
  });

  // Regression: the URL was never checked for a credential, so one pasted into its query or path
  // was stored and shown by the endpoint list, the CLI and the Developers page.
  describe('a token or secret in the URL was accepted (201) and shown by GET /api/webhooks and the CLI: now 400 naming url', () => {
    const token = generateToken('api');
    const body = token.slice(3);
    const escaped = (text: string, at: number) => `${text.slice(0, at)}%${(text.codePointAt(at) ?? 0).toString(16)}${text.slice(at + 1)}`;
    const fullWidth = (text: string) => [...text].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join('');
    it.each<[string, (jwt: string) => string]>([
      ['a token in the query', () => `https://93.184.215.14/hook?key=${token}`],
      ['a token body in the path', () => `https://93.184.215.14/hooks/${body}`],
      ['an app token in another case', () => `https://93.184.215.14/hook?t=RZA_${generateToken('app').slice(4)}`],
      ['a token with one character percent-encoded', () => `https://93.184.215.14/hook?key=${escaped(token, 20)}`],
      ['a percent-encoded token after an escape that is not UTF-8', () => `https://93.184.215.14/hook?x=%FF&key=${escaped(token, 30)}`],
      ['a token in full-width characters', () => `https://93.184.215.14/hook/${fullWidth(token)}`],
      ['a signing secret in upper case', () => `https://93.184.215.14/hook?s=WHSEC_${'Ab3+'.repeat(8)}`],
      ['a signed JWT', (jwt) => `https://93.184.215.14/hook?jwt=${jwt}`],
    ])('%s', async (_what, urlWith) => {
      const user = await signup(t);
      const res = await create(user, { url: urlWith(user.jwt) });
      expect(fields(res)).toEqual(['url']);
      expect(res.json()).toMatchObject({ errors: [{ message: 'must not contain a credential (a token, a signing secret or a JWT)' }] });
      const list = await json(t, 'GET', '/api/webhooks', undefined, user.jwt);
      expect((list.json() as { webhooks: unknown[] }).webhooks).toEqual([]);
    });

    it('URLs that only resemble one are still accepted (positive controls)', async () => {
      const user = await signup(t);
      const notToken = 'Q7mZ2xKp9LwB4vT1nRc8YhE3sJd6GfU0aXo5iNk2PqW9rMbCe';
      for (const url of [URL_OK, `https://93.184.215.14/hooks/${notToken}`, `https://93.184.215.14/rz_tools?key=${notToken}`, 'https://93.184.215.14/x?q=%E2%82%AC&bad=%FF%zz']) {
        const res = await create(user, { url });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
      }
    });
  });

  it.each([
    ['empty', []],
    ['unknown', ['token.stolen']],
    ['repeated', ['token.created', 'token.created']],
    ['not strings', [1]],
    ['missing', undefined],
  ])('refuses %s event_types with 400 naming event_types', async (_what, eventTypes) => {
    const res = await json(t, 'POST', '/api/webhooks', { url: URL_OK, ...(eventTypes === undefined ? {} : { event_types: eventTypes }) }, ada.jwt);
    expect(fields(res).every((f) => f.startsWith('event_types'))).toBe(true);
  });

  it('refuses unknown fields and bad descriptions with 400 naming them', async () => {
    expect(fields(await create(ada, { url: URL_OK, user_id: ada.id }))).toEqual(['user_id']);
    expect(fields(await create(ada, { url: URL_OK, description: 'x'.repeat(1001) }))).toEqual(['description']);
    expect(fields(await create(ada, { url: URL_OK, description: 'bell\u0007' }))).toEqual(['description']);
  });

  it('lists the event types an endpoint may choose: every audit type', async () => {
    const res = await json(t, 'GET', '/api/webhooks/event-types', undefined, ada.jwt);
    expect(res.statusCode).toBe(200);
    const { event_types: types } = res.json() as { event_types: string[] };
    expect(types).toEqual(expect.arrayContaining(['token.created', 'token.revoked', 'token.leaked', 'token.expiring', 'webhook.created', 'login.failed']));
  });

  it('allows 10 endpoints per user, then 409 conflict; another user is not affected', async () => {
    const user = await signup(t);
    for (let i = 0; i < 10; i++) await created(user);
    const res = await create(user, { url: URL_OK });
    expectProblem(res, 409, 'conflict');
    expect(((await json(t, 'GET', '/api/webhooks', undefined, user.jwt)).json() as { webhooks: unknown[] }).webhooks).toHaveLength(10);
    await created(await signup(t));
  });

  it("answers 404 for another user's endpoint, or a malformed or unknown id, on every route", async () => {
    const mine = await created(ada);
    const other = await signup(t);
    for (const id of [mine.id, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      expectProblem(await json(t, 'GET', `/api/webhooks/${id}`, undefined, other.jwt), 404, 'not_found');
      expectProblem(await json(t, 'GET', `/api/webhooks/${id}/deliveries`, undefined, other.jwt), 404, 'not_found');
      expectProblem(await json(t, 'POST', `/api/webhooks/${id}/test`, undefined, other.jwt), 404, 'not_found');
      expectProblem(await json(t, 'DELETE', `/api/webhooks/${id}`, undefined, other.jwt), 404, 'not_found');
    }
    expect((await json(t, 'GET', `/api/webhooks/${mine.id}`, undefined, ada.jwt)).statusCode).toBe(200);
  });

  it('is for user tokens only: API tokens (whatever their scopes) and app tokens get 403, no token 401', async () => {
    const mine = await created(ada);
    const api = await createApiToken(t, ada.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
    const app = await registerApp(t, ada.jwt);
    const routes: Array<['GET' | 'POST' | 'DELETE', string, unknown]> = [
      ['POST', '/api/webhooks', { url: URL_OK, event_types: ['token.created'] }],
      ['GET', '/api/webhooks', undefined],
      ['GET', '/api/webhooks/event-types', undefined],
      ['GET', `/api/webhooks/${mine.id}`, undefined],
      ['DELETE', `/api/webhooks/${mine.id}`, undefined],
      ['GET', `/api/webhooks/${mine.id}/deliveries`, undefined],
      ['POST', `/api/webhooks/${mine.id}/test`, undefined],
    ];
    for (const [method, url, body] of routes) {
      expectInsufficientScope(await json(t, method, url, body, api.token), '*');
      expectInsufficientScope(await json(t, method, url, body, app.token), '*');
      expectUnauthorized(await json(t, method, url, body));
    }
    expect((await json(t, 'GET', `/api/webhooks/${mine.id}`, undefined, ada.jwt)).statusCode).toBe(200);
  });

  it('queues a test delivery (202) shown in the deliveries, and pages them by cursor', async () => {
    const user = await signup(t);
    const endpoint = await created(user);
    const tests = [];
    for (let i = 0; i < 3; i++) {
      const res = await json(t, 'POST', `/api/webhooks/${endpoint.id}/test`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(202);
      tests.push((res.json() as { delivery: { id: string } }).delivery);
    }
    expect(tests[0]).toMatchObject({ event_id: null, event_type: 'webhook.test', status: 'pending', finished_at: null, attempts: [] });
    const page = (await json(t, 'GET', `/api/webhooks/${endpoint.id}/deliveries?limit=2`, undefined, user.jwt)).json() as { deliveries: Array<{ id: string }>; next_cursor: string };
    expect(page.deliveries).toHaveLength(2);
    const rest = (await json(t, 'GET', `/api/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${page.next_cursor}`, undefined, user.jwt)).json() as {
      deliveries: Array<{ id: string }>;
      next_cursor: null;
    };
    expect([...page.deliveries, ...rest.deliveries].map((d) => d.id).sort()).toEqual(tests.map((d) => d.id).sort());
    expect(rest.next_cursor).toBeNull();
    for (const query of ['?limit=0', '?limit=abc', '?cursor=nope!', '?cursor=YTEyMw', '?since=1']) {
      expectProblem(await json(t, 'GET', `/api/webhooks/${endpoint.id}/deliveries${query}`, undefined, user.jwt), 400, 'validation_failed');
    }
  });

  it('queued test deliveries without bound, each retried for a day, ahead of everyone else\'s: now 3 pending per endpoint, then 409', async () => {
    const user = await signup(t);
    const [endpoint, other] = [await created(user), await created(user)];
    const test = (id: string) => json(t, 'POST', `/api/webhooks/${id}/test`, undefined, user.jwt);
    for (let i = 0; i < 3; i++) expect((await test(endpoint.id)).statusCode).toBe(202);
    const refused = expectProblem(await test(endpoint.id), 409, 'conflict');
    expect(refused.detail).toMatch(/3 test deliveries/);
    expect(((await json(t, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, undefined, user.jwt)).json() as { deliveries: unknown[] }).deliveries).toHaveLength(3);
    // The cap is the endpoint's: another endpoint of the same user still gets its test.
    expect((await test(other.id)).statusCode).toBe(202);
  });

  // Regression: the count and the insert were two statements, so on PostgreSQL 200 tests at once
  // queued 8 where the cap is 3.
  it('tests sent at once passed the cap together: still 3 pending, the rest 409', async () => {
    const user = await signup(t);
    const endpoint = await created(user);
    const answers = await Promise.all(Array.from({ length: 40 }, () => json(t, 'POST', `/api/webhooks/${endpoint.id}/test`, undefined, user.jwt)));
    expect(answers.filter((a) => a.statusCode === 202)).toHaveLength(3);
    for (const refused of answers.filter((a) => a.statusCode !== 202)) expectProblem(refused, 409, 'conflict');
    expect(((await json(t, 'GET', `/api/webhooks/${endpoint.id}/deliveries`, undefined, user.jwt)).json() as { deliveries: unknown[] }).deliveries).toHaveLength(3);
  });

  // Regression: a test racing the endpoint's deletion failed the delivery's foreign key, which
  // answered 401 invalid_token to a valid user (and the Developers page logged them out).
  it('a test racing the endpoint\'s deletion is 202 or 404, never invalid_token', async () => {
    const user = await signup(t);
    for (let round = 0; round < 10; round++) {
      const endpoint = await created(user);
      const [tested, deleted] = await Promise.all([
        json(t, 'POST', `/api/webhooks/${endpoint.id}/test`, undefined, user.jwt),
        json(t, 'DELETE', `/api/webhooks/${endpoint.id}`, undefined, user.jwt),
      ]);
      expect(deleted.statusCode).toBe(204);
      if (tested.statusCode !== 202) expectProblem(tested, 404, 'not_found');
    }
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(200);
  });
});
