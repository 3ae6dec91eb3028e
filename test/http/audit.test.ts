import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, expectInsufficientScope, expectProblem, expectUnauthorized, json, login, PASSWORD, registerApp, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createService } from '../helpers/platform.js';

interface Event {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string | null };
  subject: { type: string; id: string } | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Contract §9: the audit log, as users read it. */
describe('GET /api/audit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const events = async (user: TestUser, query = ''): Promise<Event[]> => {
    const res = await json(t, 'GET', `/api/audit${query}`, undefined, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { events: Event[] }).events;
  };
  const newest = async (user: TestUser, type: string) => (await events(user, `?type=${type}&limit=1`))[0];
  /** A request as a browser would send it, so the event's address, agent and request id can be checked. */
  const send = (method: 'POST' | 'DELETE', url: string, body: unknown, token: string | undefined, agent = 'audit-test/1.0') =>
    t.inject({
      method,
      url,
      remoteAddress: '203.0.113.7',
      headers: { 'user-agent': agent, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  /** What every event of a request carries. */
  const expectRequest = (event: Event | undefined, requestId: unknown) => {
    expect(event?.id).toMatch(UUID);
    expect(event?.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(event).toMatchObject({ ip: '203.0.113.7', user_agent: 'audit-test/1.0', request_id: requestId });
  };

  it('records a signup, by the new user, with no email or password in it', async () => {
    const res = await send('POST', '/api/auth/signup', { email: 'grace@example.com', username: 'grace_h', password: PASSWORD }, undefined);
    expect(res.statusCode).toBe(201);
    const { token, user } = res.json() as { token: string; user: { id: string } };
    const [event] = await events({ jwt: token } as TestUser);
    expectRequest(event, res.headers['x-request-id']);
    expect(event).toMatchObject({ type: 'user.signed_up', actor: { type: 'user', id: user.id }, subject: { type: 'user', id: user.id }, details: {} });
  });

  it('records logins that succeed and fail, and logouts', async () => {
    const user = await signup(t);
    const failed = await send('POST', '/api/auth/login', { email: user.email, password: 'not the password at all' }, undefined);
    expect(failed.statusCode).toBe(401);
    const ok = await send('POST', '/api/auth/login', { email: user.email, password: PASSWORD }, undefined);
    const jwt = (ok.json() as { token: string }).token;
    const session = (await json(t, 'GET', '/api/me', undefined, jwt)).json().auth.token_id as string;
    const out = await send('POST', '/api/auth/logout', undefined, jwt);
    expect(out.statusCode).toBe(204);

    const [loggedOut, succeeded, failure] = await events(user);
    expectRequest(failure, failed.headers['x-request-id']);
    expect(failure).toMatchObject({ type: 'login.failed', actor: { type: 'anonymous', id: null }, subject: { type: 'user', id: user.id }, details: {} });
    expectRequest(succeeded, ok.headers['x-request-id']);
    expect(succeeded).toMatchObject({ type: 'login.succeeded', actor: { type: 'user', id: user.id }, subject: { type: 'session', id: session } });
    expectRequest(loggedOut, out.headers['x-request-id']);
    expect(loggedOut).toMatchObject({ type: 'session.logged_out', actor: { type: 'user', id: user.id }, subject: { type: 'session', id: session } });
  });

  it('records a failed login for an unknown email as nobody\'s event, keeping nothing that was typed', async () => {
    const before = await t.services.audit.list({ limit: 1 });
    const res = await send('POST', '/api/auth/login', { email: 'nobody-here@example.com', password: 'guess guess guess' }, undefined);
    expect(res.statusCode).toBe(401);
    const [event] = await t.services.audit.list({ limit: 1, type: 'login.failed' });
    expect(event?.seq).toBeGreaterThan(before[0]?.seq ?? 0);
    expect(event).toMatchObject({ userId: null, subject: null, actor: { type: 'anonymous', id: null }, details: {}, requestId: res.headers['x-request-id'] });
    expect(JSON.stringify(event)).not.toMatch(/nobody-here|guess/);
  });

  it('records API tokens created and revoked', async () => {
    const user = await signup(t);
    const created = await send('POST', '/api/tokens', { name: 'ci', scopes: ['apps:read'], expires_at: '2099-01-01T00:00:00.000Z' }, user.jwt);
    const { id } = created.json() as { id: string };
    const revoked = await send('DELETE', `/api/tokens/${id}`, undefined, user.jwt);
    expect(revoked.statusCode).toBe(204);
    const [revokedEvent, createdEvent] = await events(user);
    expectRequest(createdEvent, created.headers['x-request-id']);
    expect(createdEvent).toMatchObject({
      type: 'token.created',
      actor: { type: 'user', id: user.id },
      subject: { type: 'token', id },
      details: { token_type: 'api_token', name: 'ci', scopes: ['apps:read'], expires_at: '2099-01-01T00:00:00.000Z' },
    });
    expectRequest(revokedEvent, revoked.headers['x-request-id']);
    expect(revokedEvent).toMatchObject({ type: 'token.revoked', subject: { type: 'token', id }, details: { token_type: 'api_token' } });
  });

  it('records apps registered and deleted and their tokens, naming the API token that acted', async () => {
    const user = await signup(t);
    const writer = await createApiToken(t, user.jwt, { scopes: ['apps:write'] });
    const registered = await send('POST', '/api/apps', { name: 'Asteroids' }, writer.token);
    const app = registered.json() as { id: string; token_id: string };
    const issued = await send('POST', `/api/apps/${app.id}/tokens`, undefined, writer.token);
    const second = (issued.json() as { token_id: string }).token_id;
    const deleted = await send('DELETE', `/api/apps/${app.id}`, undefined, writer.token);
    expect(deleted.statusCode).toBe(204);

    const [appDeleted, issuedToken, firstToken, appRegistered] = await events(user);
    const byToken = { type: 'api_token', id: writer.id };
    expectRequest(appRegistered, registered.headers['x-request-id']);
    expect(appRegistered).toMatchObject({ type: 'app.registered', actor: byToken, subject: { type: 'app', id: app.id }, details: { name: 'Asteroids' } });
    expect(firstToken).toMatchObject({ type: 'token.created', subject: { type: 'token', id: app.token_id }, details: { token_type: 'app_token', app_id: app.id, scopes: [] } });
    expectRequest(issuedToken, issued.headers['x-request-id']);
    expect(issuedToken).toMatchObject({ type: 'token.created', actor: byToken, subject: { type: 'token', id: second }, details: { token_type: 'app_token', app_id: app.id } });
    expectRequest(appDeleted, deleted.headers['x-request-id']);
    expect(appDeleted).toMatchObject({ type: 'app.deleted', actor: byToken, subject: { type: 'app', id: app.id } });
  });

  it('records a user agent without control characters, cut to 256 characters; none when nothing is left', async () => {
    const user = await signup(t);
    // Separated: a run of 40 letters or digits is redacted as a token body would be.
    await send('POST', '/api/tokens', { name: 'agent' }, user.jwt, `evil\u001b[31m\u0007agent ${'x/'.repeat(200)}`);
    expect((await newest(user, 'token.created'))?.user_agent).toBe(`evil[31magent ${'x/'.repeat(120)}x\u2026`);
    await send('POST', '/api/tokens', { name: 'no agent' }, user.jwt, '\u0001\u0002 ');
    expect((await newest(user, 'token.created'))?.user_agent).toBeNull();
  });

  it('stored a UTF-8 user agent as the Latin-1 reading of its bytes (mojibake): now decoded, in the audit log and the sessions alike', async () => {
    const user = await signup(t);
    const agent = 'Caf\u00e9Client/2.0 (\u65e5\u672c; \ud83d\ude80)';
    // What Node hands over for these bytes on the wire: one character per byte.
    const onTheWire = Buffer.from(agent, 'utf8').toString('latin1');
    await send('POST', '/api/tokens', { name: 'utf-8 agent' }, user.jwt, onTheWire);
    expect((await newest(user, 'token.created'))?.user_agent).toBe(agent);
    const login = await t.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json', 'user-agent': onTheWire }, payload: { email: user.email, password: PASSWORD } });
    const sessions = await json(t, 'GET', '/api/auth/sessions', undefined, login.json().token);
    expect(sessions.json().sessions.find((s: { current: boolean }) => s.current)?.user_agent).toBe(agent);
    // Bytes that are not UTF-8 are kept as they came; a sequence cut by the length cap is dropped.
    await send('POST', '/api/tokens', { name: 'latin-1 agent' }, user.jwt, 'Caf\u00e9');
    expect((await newest(user, 'token.created'))?.user_agent).toBe('Caf\u00e9');
    await send('POST', '/api/tokens', { name: 'cut agent' }, user.jwt, `${'y-'.repeat(511)}y${Buffer.from('\u00e9', 'utf8').toString('latin1')}`);
    expect((await newest(user, 'token.created'))?.user_agent).toBe(`${'y-'.repeat(127)}y\u2026`);
  });

  it('stored a token written into the user agent as it came: now redacted', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    await send('POST', '/api/tokens', { name: 'leaky agent' }, user.jwt, `curl/8.0 (key ${token})`);
    const agent = (await newest(user, 'token.created'))?.user_agent;
    expect(agent).toBe('curl/8.0 (key [REDACTED])');
    // A control character inside the token hid it from the redaction, and its removal then joined the halves.
    await send('POST', '/api/tokens', { name: 'split agent' }, user.jwt, `curl/8.0 (key ${token.slice(0, 6)}\u0000${token.slice(6)})`);
    expect((await newest(user, 'token.created'))?.user_agent).toBe('curl/8.0 (key [REDACTED])');
  });

  it('stored part of a token its 1,024-character cut fell inside, when redacting tokens before it made room: now none of it', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    const body = token.slice(3);
    // Each whole token becomes [REDACTED], so what the cut kept of the last one came within 256 characters.
    const head = `Mozilla/5.0 ${`${token} `.repeat(18)}`;
    const agent = `${head}${'b'.repeat(1_024 - 39 - head.length - 1)} ${body} tail`;
    expect(agent.lastIndexOf(body) + 39).toBe(1_024);
    await send('POST', '/api/tokens', { name: 'cut agent' }, user.jwt, agent);
    const stored = (await newest(user, 'token.created'))?.user_agent;
    expect(stored?.startsWith(`Mozilla/5.0 ${'[REDACTED] '.repeat(18)}b`)).toBe(true);
    expect(stored).not.toContain(body.slice(0, 8));
  });

  it('stored a percent-encoded token in the user agent as it came: now redacted, in the audit log and the sessions alike', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    const encoded = `curl/8.0 (key %72${token.slice(1)})`;
    await send('POST', '/api/tokens', { name: 'encoded agent' }, user.jwt, encoded);
    expect((await newest(user, 'token.created'))?.user_agent).toBe('curl/8.0 (key [REDACTED])');
    // Decoding can reveal a control character: it is removed, and the halves it joins redacted.
    const login = await t.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json', 'user-agent': `curl/8.0 (key ${token.slice(0, 6)}%00${token.slice(6)})` },
      payload: { email: user.email, password: PASSWORD },
    });
    const sessions = await json(t, 'GET', '/api/auth/sessions', undefined, login.json().token);
    expect(sessions.json().sessions.find((s: { current: boolean }) => s.current)?.user_agent).toBe('curl/8.0 (key [REDACTED])');
  });

  it('stored a token written in full-width letters in the user agent as it came: now redacted, in the audit log and the sessions alike', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt);
    // `ｒｚ＿…`, which NFKC turns back into the token, as UTF-8 bytes on the wire (Node reads them as Latin-1).
    const fullWidth = token.replace(/[0-9A-Za-z_]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
    const onTheWire = Buffer.from(`curl/8.0 (key ${fullWidth})`, 'utf8').toString('latin1');
    await send('POST', '/api/tokens', { name: 'full-width agent' }, user.jwt, onTheWire);
    expect((await newest(user, 'token.created'))?.user_agent).toBe('curl/8.0 (key [REDACTED])');
    const login = await t.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json', 'user-agent': onTheWire }, payload: { email: user.email, password: PASSWORD } });
    const sessions = await json(t, 'GET', '/api/auth/sessions', undefined, login.json().token);
    expect(sessions.json().sessions.find((s: { current: boolean }) => s.current)?.user_agent).toBe('curl/8.0 (key [REDACTED])');
    // Positive control: full-width text that holds no token is kept as it came.
    const plain = Buffer.from('\uff23\uff4c\uff49\uff45\uff4e\uff54/1.0', 'utf8').toString('latin1');
    await send('POST', '/api/tokens', { name: 'full-width name agent' }, user.jwt, plain);
    expect((await newest(user, 'token.created'))?.user_agent).toBe('\uff23\uff4c\uff49\uff45\uff4e\uff54/1.0');
  });

  it('shows each user only their own events', async () => {
    const [a, b] = [await signup(t), await signup(t)];
    await createApiToken(t, a.jwt);
    const seen = await events(b);
    expect(seen.map((e) => e.type)).toEqual(['user.signed_up']);
    expect(seen[0]?.subject?.id).toBe(b.id);
  });

  it('pages newest first with an opaque cursor, null after the last page', async () => {
    const user = await signup(t);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createApiToken(t, user.jwt, { name: `t${i}` })).id);
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await json(t, 'GET', `/api/audit?type=token.created&limit=3${cursor ? `&cursor=${cursor}` : ''}`, undefined, user.jwt);
      const body = res.json() as { events: Event[]; next_cursor: string | null };
      pages.push(body.events.map((e) => e.subject?.id ?? ''));
      cursor = body.next_cursor;
    } while (cursor !== null);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual([...ids].reverse());
    expect((await events(user)).length).toBe(8);
    expect((await events(user, '?limit=200')).length).toBe(8);
  });

  it('refuses a bad limit, type or cursor with a 400 naming it, never a 5xx', async () => {
    const user = await signup(t);
    const field = async (query: string) => {
      const body = expectProblem(await json(t, 'GET', `/api/audit?${query}`, undefined, user.jwt), 400, 'validation_failed');
      return (body.errors as Array<{ field: string }>).map((e) => e.field);
    };
    for (const limit of ['0', '201', 'ten', '-1', '1.5', '', '99999999999']) expect(await field(`limit=${limit}`)).toEqual(['limit']);
    for (const type of ['token.stolen', 'TOKEN.CREATED', '']) expect(await field(`type=${type}`)).toEqual(['type']);
    const forged = [Buffer.from('a0').toString('base64url'), Buffer.from('b12').toString('base64url'), Buffer.from('a1e9x').toString('base64url'), 'not a cursor', '%00', 'YQ', 'x'.repeat(65), Buffer.from(`a${'9'.repeat(40)}`).toString('base64url')];
    for (const cursor of forged) expect(await field(`cursor=${encodeURIComponent(cursor)}`)).toEqual(['cursor']);
    expect(await field('since=yesterday')).toEqual(['since']);
  });

  // Regression: the decoder ignores a stray last character and unused bits, so `YTEx` (a11) with
  // one more character, or `YTF` for `YTE` (a1), named the same position as the cursor handed out.
  it('refuses a cursor spelled otherwise than the one handed out, though it decodes to the same position', async () => {
    const user = await signup(t);
    for (const cursor of [`${Buffer.from('a11').toString('base64url')}A`, 'YTF', 'YTE=']) {
      const res = await json(t, 'GET', `/api/audit?cursor=${encodeURIComponent(cursor)}`, undefined, user.jwt);
      expect((expectProblem(res, 400, 'validation_failed').errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['cursor']);
    }
    expect((await json(t, 'GET', `/api/audit?cursor=${Buffer.from('a11').toString('base64url')}`, undefined, user.jwt)).statusCode).toBe(200);
  });

  it('needs a user token: API and app tokens get 403, no token 401', async () => {
    const user = await signup(t);
    const api = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
    const app = await registerApp(t, user.jwt);
    expectInsufficientScope(await json(t, 'GET', '/api/audit', undefined, api.token), '*');
    expectInsufficientScope(await json(t, 'GET', '/api/audit', undefined, app.token), '*');
    expectInsufficientScope(await json(t, 'GET', '/api/audit', undefined, (await createService(t, 'auditor')).token), '*');
    expectUnauthorized(await json(t, 'GET', '/api/audit'));
  });

  it('records nothing for GET /api/me, whatever the credential', async () => {
    const user = await signup(t);
    const api = await createApiToken(t, user.jwt);
    const app = await registerApp(t, user.jwt);
    const count = async () => (await t.services.audit.list({ limit: 100_000 })).length;
    const before = await count();
    for (const token of [user.jwt, api.token, app.token]) expect((await json(t, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
    expect(await count()).toBe(before);
  });

  it('never holds a secret: no token value, digest, password or password hash anywhere in the log', async () => {
    const user = await signup(t, { password: 'a quite secret passphrase 42' });
    await json(t, 'POST', '/api/auth/login', { email: user.email, password: 'a wrong secret passphrase 43' });
    const jwt = await login(t, user.email, 'a quite secret passphrase 42');
    const api = await createApiToken(t, jwt);
    const app = await registerApp(t, jwt);
    await json(t, 'POST', '/api/tokens/leaked', { tokens: [api.token] });
    const { db } = t.services.database;
    const digests = (await db.selectFrom('tokens').select('digest').where('user_id', '=', user.id).execute()).map((r) => r.digest);
    const [hash] = (await db.selectFrom('users').select('password_hash').where('id', '=', user.id).execute()).map((r) => r.password_hash);
    const rows = JSON.stringify(await db.selectFrom('audit_events').selectAll().execute());
    expect(rows).toContain(api.id);
    for (const secret of [api.token, app.token, user.jwt, jwt, 'a quite secret passphrase 42', 'a wrong secret passphrase 43', hash, ...digests]) {
      expect(secret && rows.includes(secret), 'a secret in the audit log').toBe(false);
    }
    expect(rows).not.toMatch(/rz[as]?_[0-9A-Za-z]{20}/);
  });
});

/** Contract §8 and §9: the events of account security, the token lifecycle and its sweeps. */
describe('audit events of account security and the token lifecycle', () => {
  const DAY = 86_400_000;
  const clock = new TestClock();
  let t: TestApp;
  beforeAll(async () => {
    // User tokens outlive the minutes the rotation test moves the clock by; the idle test logs in again.
    t = await startTestApp({ clock, env: { TOKEN_IDLE_REVOKE_DAYS: '10', JWT_TTL_SECONDS: '604800' } });
  });
  afterAll(() => t.close());

  const send = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, body: unknown, token: string, remoteAddress = '203.0.113.7') =>
    t.inject({
      method,
      url,
      remoteAddress,
      headers: { 'user-agent': 'audit-test/1.0', authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const ofType = async (user: Pick<TestUser, 'jwt'>, type: string): Promise<Event[]> => {
    const res = await json(t, 'GET', `/api/audit?type=${type}`, undefined, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { events: Event[] }).events;
  };
  const sessionOf = async (jwt: string) => (await json(t, 'GET', '/api/me', undefined, jwt)).json().auth.token_id as string;
  const byRequest = (res: { headers: Record<string, unknown> }) => ({ ip: '203.0.113.7', user_agent: 'audit-test/1.0', request_id: res.headers['x-request-id'] });
  const bySystem = { actor: { type: 'system', id: null }, ip: null, user_agent: null, request_id: null };

  it('a password change records password.changed and one session.revoked per other session ended, by the same request', async () => {
    const user = await signup(t);
    const others = [await sessionOf(await login(t, user.email)), await sessionOf(await login(t, user.email))];
    const res = await send('POST', '/api/auth/password', { current_password: PASSWORD, new_password: 'an entirely new passphrase 7' }, user.jwt);
    expect(res.statusCode, res.body).toBe(204);
    const [changed, ...more] = await ofType(user, 'password.changed');
    expect(more).toEqual([]);
    expect(changed).toMatchObject({ actor: { type: 'user', id: user.id }, subject: { type: 'user', id: user.id }, details: { sessions_ended: 2 }, ...byRequest(res) });
    const ended = await ofType(user, 'session.revoked');
    expect(ended.map((e) => e.subject?.id).sort()).toEqual([...others].sort());
    for (const event of ended) expect(event).toMatchObject({ actor: { type: 'user', id: user.id }, details: { reason: 'password_changed' }, ...byRequest(res) });
  });

  it('ending one session, then every other, records session.revoked for each session ended', async () => {
    const user = await signup(t);
    const [second, third, fourth] = [await login(t, user.email), await login(t, user.email), await login(t, user.email)];
    const one = await sessionOf(second);
    const rest = [await sessionOf(third), await sessionOf(fourth)];
    const single = await send('DELETE', `/api/auth/sessions/${one}`, undefined, user.jwt);
    expect(single.statusCode).toBe(204);
    const all = await send('DELETE', '/api/auth/sessions', undefined, user.jwt);
    expect(all.statusCode).toBe(204);
    // Nothing left to end: nothing recorded.
    expect((await send('DELETE', '/api/auth/sessions', undefined, user.jwt)).statusCode).toBe(204);
    const ended = await ofType(user, 'session.revoked');
    expect(ended).toHaveLength(3);
    const [a, b, first] = ended;
    expect(first).toMatchObject({ actor: { type: 'user', id: user.id }, subject: { type: 'session', id: one }, details: { reason: 'ended' }, ...byRequest(single) });
    expect([a?.subject?.id, b?.subject?.id].sort()).toEqual([...rest].sort());
    for (const event of [a, b]) expect(event).toMatchObject({ details: { reason: 'others_ended' }, ...byRequest(all) });
  });

  it('PATCH records token.updated with the new values of what changed', async () => {
    const user = await signup(t);
    const token = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['10.0.0.0/8'] });
    const res = await send('PATCH', `/api/tokens/${token.id}`, { name: 'narrowed', scopes: ['apps:read'] }, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    const [updated, ...more] = await ofType(user, 'token.updated');
    expect(more).toEqual([]);
    expect(updated).toMatchObject({ actor: { type: 'user', id: user.id }, subject: { type: 'token', id: token.id }, ...byRequest(res) });
    expect(updated?.details).toEqual({ token_type: 'api_token', name: 'narrowed', hint: `rz_${token.token.slice(-4)}`, scopes: ['apps:read'] });
    // A PATCH that is refused changes nothing and records nothing.
    expect((await send('PATCH', `/api/tokens/${token.id}`, { scopes: ['apps:write'] }, user.jwt)).statusCode).toBe(400);
    expect(await ofType(user, 'token.updated')).toHaveLength(1);
  });

  it('a rotation records token.rotated naming the new token, never its value; the grace end, token.expired by the service', async () => {
    const user = await signup(t);
    const old = await createApiToken(t, user.jwt);
    const res = await send('POST', `/api/tokens/${old.id}/rotate`, { grace_seconds: 60 }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
    const next = res.json() as { id: string; token: string };
    const [rotated] = await ofType(user, 'token.rotated');
    expect(rotated).toMatchObject({ actor: { type: 'user', id: user.id }, subject: { type: 'token', id: old.id }, ...byRequest(res) });
    expect(rotated?.details).toEqual({ token_type: 'api_token', name: 'test token', hint: `rz_${old.token.slice(-4)}`, new_token_id: next.id, grace_seconds: 60 });
    expect(JSON.stringify(rotated)).not.toContain(next.token);

    await t.services.maintenance.runOnce();
    expect(await ofType(user, 'token.expired')).toEqual([]);
    clock.advance(61_000);
    await t.services.maintenance.runOnce();
    const [expired, ...more] = await ofType(user, 'token.expired');
    expect(more).toEqual([]);
    expect(expired).toMatchObject({ ...bySystem, subject: { type: 'token', id: old.id }, details: { token_type: 'api_token', reason: 'rotation_grace_ended' } });
  });

  it('a token that reached the expiry it was created with recorded nothing (contract §9 lists expired): now token.expired by the service', async () => {
    const user = await signup(t);
    const token = await createApiToken(t, user.jwt, { expires_at: new Date(clock.now() + 2 * DAY).toISOString() });
    await t.services.maintenance.runOnce();
    expect(await ofType(user, 'token.expired')).toEqual([]);
    clock.advance(2 * DAY + 1);
    await t.services.maintenance.runOnce();
    await t.services.maintenance.runOnce();
    const [expired, ...more] = await ofType(user, 'token.expired');
    expect(more).toEqual([]);
    expect(expired).toMatchObject({ ...bySystem, subject: { type: 'token', id: token.id }, details: { token_type: 'api_token', reason: 'lifetime_ended' } });
    expect((await send('GET', '/api/me', undefined, token.token)).statusCode).toBe(401);
  });

  it('rotating a token in its grace revokes the one it replaced, recorded as token.revoked by that request', async () => {
    const user = await signup(t);
    const first = await createApiToken(t, user.jwt);
    const second = (await send('POST', `/api/tokens/${first.id}/rotate`, { grace_seconds: 600 }, user.jwt)).json() as { id: string };
    const res = await send('POST', `/api/tokens/${second.id}/rotate`, { grace_seconds: 600 }, user.jwt);
    expect(res.statusCode).toBe(201);
    const [revoked, ...more] = await ofType(user, 'token.revoked');
    expect(more).toEqual([]);
    expect(revoked).toMatchObject({ subject: { type: 'token', id: first.id }, details: { token_type: 'api_token', reason: 'rotated_again' }, ...byRequest(res) });
  });

  it('the idle sweep records token.idle_revoked by the service, with the policy', async () => {
    const user = await signup(t);
    const idle = await createApiToken(t, user.jwt);
    clock.advance(10 * DAY + 1);
    await t.services.maintenance.runOnce();
    const events = await ofType({ jwt: await login(t, user.email) }, 'token.idle_revoked');
    expect(events.map((e) => e.subject?.id)).toEqual([idle.id]);
    expect(events[0]).toMatchObject({ ...bySystem, details: { token_type: 'api_token', idle_days: 10 } });
  });

  it('refusals by an allow-list: the first was written only with the next batch, up to a minute later; now at once, the next ones counted and written as one token.refused per token and interval', async () => {
    const user = await signup(t);
    const fenced = await createApiToken(t, user.jwt, { allowed_cidrs: ['198.51.100.0/24'] });
    expect((await send('GET', '/api/me', undefined, fenced.token)).statusCode).toBe(401);
    // The first refusal is news (a token tried from elsewhere): its write starts on the refusal itself.
    await expect.poll(() => t.services.audit.list({ limit: 10, userId: user.id, type: 'token.refused' }), { interval: 5 }).toHaveLength(1);
    for (let i = 1; i < 30; i++) expect((await send('GET', '/api/me', undefined, fenced.token)).statusCode).toBe(401);
    expect((await send('GET', '/api/me', undefined, fenced.token, '198.51.100.9')).statusCode).toBe(200);
    // The next ones are counted in memory only: no write on the refused requests' path.
    expect(await t.services.audit.list({ limit: 10, userId: user.id, type: 'token.refused' })).toHaveLength(1);
    await t.services.refusals.flush();
    const byCount = (events: Array<{ details: unknown }>) => [...events].sort((a, b) => (a.details as { refusals: number }).refusals - (b.details as { refusals: number }).refusals);
    const refused = byCount(await ofType(user, 'token.refused'));
    const shape = { actor: { type: 'api_token', id: fenced.id }, subject: { type: 'token', id: fenced.id }, ip: '203.0.113.7' };
    const last = new Date(clock.now()).toISOString();
    expect(refused).toMatchObject([
      { ...shape, details: { token_type: 'api_token', refusals: 1, last_refused_at: last } },
      { ...shape, details: { token_type: 'api_token', refusals: 29, last_refused_at: last } },
    ]);
    for (let i = 0; i < 3; i++) await send('GET', '/api/me', undefined, fenced.token, '192.0.2.1');
    await t.services.refusals.flush();
    await t.services.refusals.flush();
    const again = byCount(await ofType(user, 'token.refused'));
    expect(again).toMatchObject([
      { ip: '203.0.113.7', details: { refusals: 1 } },
      { ip: '192.0.2.1', details: { refusals: 3 } },
      { ip: '203.0.113.7', details: { refusals: 29 } },
    ]);
  });

  it('DELETE /api/me records user.deleted by the user, kept after the account is gone', async () => {
    const user = await signup(t);
    const res = await send('DELETE', '/api/me', { password: PASSWORD }, user.jwt);
    expect(res.statusCode, res.body).toBe(204);
    const [deleted, ...more] = await t.services.audit.list({ limit: 10, userId: user.id, type: 'user.deleted' });
    expect(more).toEqual([]);
    expect(deleted).toMatchObject({
      actor: { type: 'user', id: user.id },
      subject: { type: 'user', id: user.id },
      address: '203.0.113.7',
      userAgent: 'audit-test/1.0',
      requestId: res.headers['x-request-id'],
    });
  });
});

/**
 * Every token event named its token only by id (token.created alone carried the name): the log's
 * reader could not tell which of their tokens was revoked, refused or leaked. Now each carries the
 * token's name and hint (`rz_` or `rza_` and the value's last four characters), never more of it.
 */
describe('every token event names the token, by its name and hint', () => {
  const DAY = 86_400_000;
  const clock = new TestClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { TOKEN_IDLE_REVOKE_DAYS: '10' } });
  });
  afterAll(() => t.close());

  interface Named {
    readonly id: string;
    readonly name: string;
    readonly hint: string;
    readonly value: string;
  }
  const apiToken = async (user: TestUser, body: Record<string, unknown> = {}): Promise<Named> => {
    const created = await createApiToken(t, user.jwt, { name: 'deploy bot', ...body });
    return { id: created.id, name: 'deploy bot', hint: `rz_${created.token.slice(-4)}`, value: created.token };
  };
  const call = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, body: unknown, token: string, remoteAddress = '203.0.113.7') =>
    t.inject({
      method,
      url,
      remoteAddress,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const inDays = (days: number) => new Date(clock.now() + days * DAY).toISOString();

  /** Each event type, and how to cause it for a new user: the token it must name. */
  const cases: Array<[string, (user: TestUser) => Promise<Named>]> = [
    ['token.created', (user) => apiToken(user)],
    [
      'token.created',
      async (user) => {
        const app = await registerApp(t, user.jwt, { name: 'Asteroids' });
        return { id: app.token_id, name: 'Asteroids', hint: `rza_${app.token.slice(-4)}`, value: app.token };
      },
    ],
    [
      'token.revoked',
      async (user) => {
        const token = await apiToken(user);
        expect((await call('DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
        return token;
      },
    ],
    [
      'token.updated',
      async (user) => {
        const token = await apiToken(user, { scopes: ['apps:read', 'tokens:read'] });
        expect((await call('PATCH', `/api/tokens/${token.id}`, { scopes: ['apps:read'] }, user.jwt)).statusCode).toBe(200);
        return token;
      },
    ],
    [
      'token.rotated',
      async (user) => {
        const token = await apiToken(user);
        expect((await call('POST', `/api/tokens/${token.id}/rotate`, { grace_seconds: 60 }, user.jwt)).statusCode).toBe(201);
        return token;
      },
    ],
    [
      'token.expiring',
      async (user) => {
        // Lives over 7 days and expires within 7: the week's notice, before the idle policy's 10 days.
        const token = await apiToken(user, { expires_at: inDays(8) });
        clock.advance(2 * DAY);
        await t.services.maintenance.runOnce();
        return token;
      },
    ],
    [
      'token.expired',
      async (user) => {
        const token = await apiToken(user, { expires_at: inDays(2) });
        clock.advance(2 * DAY + 1);
        await t.services.maintenance.runOnce();
        return token;
      },
    ],
    [
      'token.idle_revoked',
      async (user) => {
        const token = await apiToken(user);
        clock.advance(10 * DAY + 1);
        await t.services.maintenance.runOnce();
        return token;
      },
    ],
    [
      'token.refused',
      async (user) => {
        const token = await apiToken(user, { allowed_cidrs: ['198.51.100.0/24'] });
        expect((await call('GET', '/api/me', undefined, token.value)).statusCode).toBe(401);
        await t.services.refusals.flush();
        return token;
      },
    ],
    [
      'token.leaked',
      async (user) => {
        const token = await apiToken(user);
        expect((await json(t, 'POST', '/api/tokens/leaked', { tokens: [token.value] })).statusCode).toBe(202);
        return token;
      },
    ],
  ];

  it.each(cases)('%s carries details.name and details.hint', async (type, cause) => {
    const user = await signup(t);
    const token = await cause(user);
    // A fresh login: some causes move the clock past the signup's user token.
    const res = await json(t, 'GET', `/api/audit?type=${type}`, undefined, await login(t, user.email));
    expect(res.statusCode, res.body).toBe(200);
    const [event, ...more] = (res.json() as { events: Event[] }).events;
    expect(more).toEqual([]);
    expect(event).toMatchObject({ type, subject: { type: 'token', id: token.id }, details: { name: token.name, hint: token.hint } });
    expect(JSON.stringify(event)).not.toContain(token.value);
  });
});
