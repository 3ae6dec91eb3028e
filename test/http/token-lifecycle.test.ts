import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectInsufficientScope, expectInvalidToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The fields a 400 names. */
const fieldsOf = (problem: Record<string, unknown>) => (problem.errors as Array<{ field: string }>).map((e) => e.field);

describe('token lifecycle', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    // User tokens outlive the hours and days these tests move the clock by.
    t = await startTestApp({ clock, env: { LAST_USED_FLUSH_MS: '3600000', JWT_TTL_SECONDS: '604800' } });
    user = await signup(t);
    other = await signup(t);
  });
  afterAll(() => t.close());

  describe('GET /api/tokens/{id}', () => {
    it('the list item plus allowed_cidrs, last_used_ip, scopes_used and origin; nothing used yet', async () => {
      const created = await createApiToken(t, user.jwt, { name: 'detail', scopes: ['apps:read', 'tokens:read'] });
      const res = await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        id: created.id,
        type: 'api_token',
        name: 'detail',
        scopes: ['apps:read', 'tokens:read'],
        created_at: new Date(clock.now()).toISOString(),
        expires_at: null,
        last_used_at: null,
        hint: `rz_${created.token.slice(-4)}`,
        allowed_cidrs: null,
        last_used_ip: null,
        scopes_used: [],
        state: 'active',
        revoked_at: null,
        origin: 'api',
        client_id: null,
        device_name: null,
        derivable: false,
        children_revoked_before: null,
        children_seen: 0,
      });
      expect(res.body).not.toContain(created.token);
    });

    it('records the last address and the scopes the token exercised, not those it merely carries', async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
      expect((await json(t, 'GET', '/api/apps', undefined, created.token, '198.51.100.7')).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, created.token, '198.51.100.8')).statusCode).toBe(200);
      const detail = (await json(t, 'GET', `/api/tokens/${created.id}`, undefined, created.token, '198.51.100.9')).json();
      // The read itself is a use with tokens:read, from .9; apps:write was never needed.
      expect(detail.scopes_used).toEqual(['apps:read', 'tokens:read']);
      expect(detail.last_used_ip).toBe('198.51.100.9');
      expect(detail.last_used_at).toBe(new Date(clock.now()).toISOString());
    });

    it('an API token needs tokens:read; an app token is refused', async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['apps:read'] });
      expectInsufficientScope(await json(t, 'GET', `/api/tokens/${created.id}`, undefined, created.token), 'tokens:read');
      const app = await registerApp(t, user.jwt);
      expectInsufficientScope(await json(t, 'GET', `/api/tokens/${app.token_id}`, undefined, app.token), 'tokens:read');
    });

    it('shows an app token of one of your apps', async () => {
      const app = await registerApp(t, user.jwt, { name: 'Detailed' });
      const detail = (await json(t, 'GET', `/api/tokens/${app.token_id}`, undefined, user.jwt)).json();
      expect(detail).toMatchObject({ id: app.token_id, type: 'app_token', name: 'Detailed', hint: `rza_${app.token.slice(-4)}` });
    });

    it("404 for someone else's, unknown and malformed ids alike (a revoked one answers with its state)", async () => {
      const theirs = await createApiToken(t, other.jwt);
      const revoked = await createApiToken(t, user.jwt);
      expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expect((await json(t, 'GET', `/api/tokens/${revoked.id}`, undefined, user.jwt)).json()).toMatchObject({ id: revoked.id, state: 'revoked' });
      const bodies = [];
      for (const id of [theirs.id, UNKNOWN_ID, 'not-a-uuid']) {
        const res = await json(t, 'GET', `/api/tokens/${id}`, undefined, user.jwt);
        expectProblem(res, 404, 'not_found');
        bodies.push({ ...res.json(), request_id: '' });
      }
      expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    });
  });

  describe('PATCH /api/tokens/{id}', () => {
    it('renames and narrows; the next request sees the narrower token', async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
      expect((await json(t, 'GET', '/api/apps', undefined, created.token)).statusCode).toBe(200);
      const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, { name: '  narrowed ', scopes: ['tokens:read'] }, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: created.id, name: 'narrowed', scopes: ['tokens:read'] });
      expectInsufficientScope(await json(t, 'GET', '/api/apps', undefined, created.token), 'apps:read');
      expect((await json(t, 'GET', '/api/me', undefined, created.token)).json().auth.scopes).toEqual(['tokens:read']);
    });

    it.each([
      ['a scope the token lacks', { scopes: ['apps:write'] }, 'scopes'],
      ['a scope outside the catalogue', { scopes: ['admin:all'] }, 'scopes'],
      ['a duplicate scope', { scopes: ['apps:read', 'apps:read'] }, 'scopes'],
      ['a blank name', { name: '  ' }, 'name'],
      ['a name of zero-width spaces', { name: '\u200b\u200b' }, 'name'],
      ['an unknown field', { expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
      ['a malformed network', { allowed_cidrs: ['10.0.0.0/33'] }, 'allowed_cidrs'],
      ['an empty allow-list', { allowed_cidrs: [] }, 'allowed_cidrs'],
    ])('400 for %s, and nothing changes', async (_name, body, field) => {
      const created = await createApiToken(t, user.jwt, { name: 'kept', scopes: ['apps:read'] });
      const problem = expectProblem(await json(t, 'PATCH', `/api/tokens/${created.id}`, body, user.jwt), 400, 'validation_failed');
      expect(fieldsOf(problem).some((f) => f === field || f.startsWith(`${field}.`))).toBe(true);
      expect((await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json()).toMatchObject({ name: 'kept', scopes: ['apps:read'] });
    });

    it('an empty PATCH was a 500 (an UPDATE with nothing to set): now 200 with the token unchanged, and no event', async () => {
      const created = await createApiToken(t, user.jwt, { name: 'as is', scopes: ['apps:read'] });
      const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, {}, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual((await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json());
      expect(res.json()).toMatchObject({ name: 'as is', scopes: ['apps:read'] });
      const changes = await t.services.database.db.selectFrom('changes').select('event').where('ref', '=', created.id).execute();
      expect(changes).toEqual([]);
      const audit = (await json(t, 'GET', '/api/audit?type=token.updated', undefined, user.jwt)).json().events as Array<{ subject: { id: string } | null }>;
      expect(audit.filter((e) => e.subject?.id === created.id)).toEqual([]);
    });

    it('a PATCH that repeated the current values was written as a change (token.updated, a change for every instance): now none', async () => {
      const created = await createApiToken(t, user.jwt, { name: 'same', scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'] });
      const bodies = [
        { name: 'same' },
        { scopes: ['tokens:read', 'apps:read'] },
        { allowed_cidrs: ['2001:db8::/32', '10.0.0.0/08'] },
        { name: 'same', scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'] },
      ];
      for (const body of bodies) {
        const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, body, user.jwt);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ name: 'same', scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'] });
      }
      const changes = await t.services.database.db.selectFrom('changes').select('event').where('ref', '=', created.id).execute();
      expect(changes).toEqual([]);
      const audit = (await json(t, 'GET', '/api/audit?type=token.updated', undefined, user.jwt)).json().events as Array<{ subject: { id: string } | null }>;
      expect(audit.filter((e) => e.subject?.id === created.id)).toEqual([]);
      // Positive control: a real narrowing is one change and one event.
      expect((await json(t, 'PATCH', `/api/tokens/${created.id}`, { name: 'same', scopes: ['apps:read'] }, user.jwt)).statusCode).toBe(200);
      const after = (await json(t, 'GET', '/api/audit?type=token.updated', undefined, user.jwt)).json().events as Array<{ subject: { id: string } | null; details: Record<string, unknown> }>;
      expect(after.filter((e) => e.subject?.id === created.id)).toHaveLength(1);
    });

    it('networks only narrow: inside a current one is accepted, a wider or other one is 400', async () => {
      const created = await createApiToken(t, user.jwt, { allowed_cidrs: ['10.0.0.0/8', '2001:db8::/32'] });
      const wider = await json(t, 'PATCH', `/api/tokens/${created.id}`, { allowed_cidrs: ['10.0.0.0/7'] }, user.jwt);
      expect(fieldsOf(expectProblem(wider, 400, 'validation_failed'))).toEqual(['allowed_cidrs']);
      const elsewhere = await json(t, 'PATCH', `/api/tokens/${created.id}`, { allowed_cidrs: ['192.168.0.0/16'] }, user.jwt);
      expectProblem(elsewhere, 400, 'validation_failed');
      const narrower = await json(t, 'PATCH', `/api/tokens/${created.id}`, { allowed_cidrs: ['10.1.0.0/16', '2001:db8:1::/48'] }, user.jwt);
      expect(narrower.statusCode, narrower.body).toBe(200);
      expect(narrower.json().allowed_cidrs).toEqual(['10.1.0.0/16', '2001:db8:1::/48']);
      expect((await json(t, 'GET', '/api/me', undefined, created.token, '10.2.0.1')).statusCode).toBe(401);
      expect((await json(t, 'GET', '/api/me', undefined, created.token, '10.1.0.1')).statusCode).toBe(200);
    });

    it('a token without an allow-list may be given one, effective on the next request', async () => {
      const created = await createApiToken(t, user.jwt);
      expect((await json(t, 'GET', '/api/me', undefined, created.token, '203.0.113.1')).statusCode).toBe(200);
      const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, { allowed_cidrs: ['198.51.100.0/24'] }, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, created.token, '203.0.113.1'));
    });

    it('narrows an app token of your app', async () => {
      const app = await registerApp(t, user.jwt);
      const res = await json(t, 'PATCH', `/api/tokens/${app.token_id}`, { allowed_cidrs: ['127.0.0.0/8'] }, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, app.token, '198.51.100.1'));
    });

    it("needs a user token; someone else's token is 404", async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['tokens:read'] });
      expectInsufficientScope(await json(t, 'PATCH', `/api/tokens/${created.id}`, { name: 'x' }, created.token), '*');
      expectProblem(await json(t, 'PATCH', `/api/tokens/${created.id}`, { name: 'x' }, other.jwt), 404, 'not_found');
    });

    it('emits token.updated with the new scopes through the change log', async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'] });
      await json(t, 'PATCH', `/api/tokens/${created.id}`, { scopes: [] }, user.jwt);
      const rows = await t.services.database.db.selectFrom('changes').select(['kind', 'ref', 'event']).where('ref', '=', created.id).execute();
      expect(rows.map((r) => JSON.parse(r.event ?? 'null'))).toEqual([{ type: 'token.updated', data: { token_id: created.id, scopes: [] } }]);
    });
  });

  describe('POST /api/tokens/{id}/rotate', () => {
    it('201 with a new token like the old one; the old one stops at once by default', async () => {
      const old = await createApiToken(t, user.jwt, { name: 'rotating', scopes: ['tokens:read'], allowed_cidrs: ['127.0.0.0/8'] });
      const res = await json(t, 'POST', `/api/tokens/${old.id}/rotate`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body).toEqual({
        id: expect.any(String),
        token: expect.stringMatching(/^rz_[0-9A-Za-z]{49}$/),
        type: 'api_token',
        name: 'rotating',
        scopes: ['tokens:read'],
        allowed_cidrs: ['127.0.0.0/8'],
        created_at: new Date(clock.now()).toISOString(),
        expires_at: null,
        replaces: old.id,
      });
      expect(res.headers['cache-control']).toBe('no-store');
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, old.token));
      expect((await json(t, 'GET', '/api/me', undefined, body.token)).statusCode).toBe(200);
      const events = await t.services.database.db.selectFrom('changes').select('event').where('ref', '=', old.id).execute();
      expect(events.map((e) => JSON.parse(e.event ?? 'null').type)).toEqual(['token.revoked']);
    });

    it('with a grace period the old token works until then, and not a millisecond after', async () => {
      const old = await createApiToken(t, user.jwt);
      expect((await json(t, 'GET', '/api/me', undefined, old.token)).statusCode).toBe(200);
      const res = await json(t, 'POST', `/api/tokens/${old.id}/rotate`, { grace_seconds: 3600 }, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      clock.advance(HOUR - 1);
      expect((await json(t, 'GET', '/api/me', undefined, old.token)).json().auth.expires_at).toBe(new Date(clock.now() + 1).toISOString());
      clock.advance(1);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, old.token));
      expect((await json(t, 'GET', '/api/me', undefined, res.json().token)).statusCode).toBe(200);
    });

    it('the new token keeps the lifetime length, counted from now', async () => {
      const old = await createApiToken(t, user.jwt, { expires_at: new Date(clock.now() + 30 * DAY).toISOString() });
      clock.advance(DAY);
      const body = (await json(t, 'POST', `/api/tokens/${old.id}/rotate`, {}, user.jwt)).json();
      expect(body.expires_at).toBe(new Date(clock.now() + 30 * DAY).toISOString());
    });

    it('rotates an app token into an app token of the same app', async () => {
      const app = await registerApp(t, user.jwt);
      const res = await json(t, 'POST', `/api/tokens/${app.token_id}/rotate`, { grace_seconds: 60 }, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      const rotated = res.json();
      expect(rotated).toMatchObject({ type: 'app_token', token: expect.stringMatching(/^rza_/), replaces: app.token_id });
      expect((await json(t, 'GET', '/api/me', undefined, rotated.token)).json().app.id).toBe(app.id);
      expect((await json(t, 'GET', '/api/me', undefined, app.token)).statusCode).toBe(200);
    });

    it('a replaced token cannot be rotated again (409); rotating its successor ends its grace at once', async () => {
      const first = await createApiToken(t, user.jwt);
      const second = (await json(t, 'POST', `/api/tokens/${first.id}/rotate`, { grace_seconds: 600 }, user.jwt)).json();
      expectProblem(await json(t, 'POST', `/api/tokens/${first.id}/rotate`, { grace_seconds: 600 }, user.jwt), 409, 'conflict');
      const third = (await json(t, 'POST', `/api/tokens/${second.id}/rotate`, { grace_seconds: 600 }, user.jwt)).json();
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, first.token));
      expect((await json(t, 'GET', '/api/me', undefined, second.token)).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, third.token)).statusCode).toBe(200);
    });

    it('a rotated token was still narrowed by PATCH (200) while its replacement kept the wider scopes and networks: now 409, in sequence and in a race', async () => {
      const wide = { name: 'narrow after rotate', scopes: ['apps:read', 'tokens:read'], allowed_cidrs: ['127.0.0.0/8'] };
      const narrower = { scopes: ['apps:read'], allowed_cidrs: ['127.0.0.1/32'] };
      const old = await createApiToken(t, user.jwt, wide);
      const rotated = (await json(t, 'POST', `/api/tokens/${old.id}/rotate`, { grace_seconds: 600 }, user.jwt)).json();
      expectProblem(await json(t, 'PATCH', `/api/tokens/${old.id}`, narrower, user.jwt), 409, 'conflict');
      expectProblem(await json(t, 'PATCH', `/api/tokens/${old.id}`, { name: 'renamed' }, user.jwt), 409, 'conflict');
      expect((await json(t, 'PATCH', `/api/tokens/${rotated.id}`, narrower, user.jwt)).json()).toMatchObject(narrower);

      for (let round = 0; round < 5; round++) {
        const raced = await createApiToken(t, user.jwt, wide);
        const [rotation, patch] = await Promise.all([
          json(t, 'POST', `/api/tokens/${raced.id}/rotate`, { grace_seconds: 600 }, user.jwt),
          json(t, 'PATCH', `/api/tokens/${raced.id}`, narrower, user.jwt),
        ]);
        expect(rotation.statusCode, rotation.body).toBe(201);
        const successor = (await json(t, 'GET', `/api/tokens/${rotation.json().id}`, undefined, user.jwt)).json();
        // Either the narrowing came first and the replacement inherits it, or it lost to the rotation.
        if (patch.statusCode === 200) expect(successor).toMatchObject(narrower);
        else expectProblem(patch, 409, 'conflict');
      }
    });

    it('parallel rotations of one token answered 404 to the losers on PostgreSQL: one wins, every other is 409', async () => {
      const old = await createApiToken(t, user.jwt, { name: 'raced rotation' });
      const answers = await Promise.all(Array.from({ length: 12 }, () => json(t, 'POST', `/api/tokens/${old.id}/rotate`, { grace_seconds: 600 }, user.jwt)));
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
      for (const lost of answers.filter((a) => a.statusCode !== 201)) expectProblem(lost, 409, 'conflict');
      const { tokens } = (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json() as { tokens: Array<{ name: string }> };
      expect(tokens.filter((k) => k.name === 'raced rotation')).toHaveLength(2);
    });

    // Regression: a rotation with no grace revokes the old token at once, so the next rotation of it
    // found no active token and answered 404, where the contract says a rotated token is 409.
    it('a token rotated without grace answered 404 to the next rotation, and to the loser of two at once: now 409', async () => {
      const old = await createApiToken(t, user.jwt);
      expect((await json(t, 'POST', `/api/tokens/${old.id}/rotate`, {}, user.jwt)).statusCode).toBe(201);
      expectProblem(await json(t, 'POST', `/api/tokens/${old.id}/rotate`, {}, user.jwt), 409, 'conflict');
      for (let round = 0; round < 5; round++) {
        const raced = await createApiToken(t, user.jwt);
        const answers = await Promise.all([0, 1].map(() => json(t, 'POST', `/api/tokens/${raced.id}/rotate`, {}, user.jwt)));
        expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
        for (const lost of answers.filter((a) => a.statusCode !== 201)) expectProblem(lost, 409, 'conflict');
      }
      // Someone else's rotated token is still 404, like any id they do not own.
      expectProblem(await json(t, 'POST', `/api/tokens/${old.id}/rotate`, {}, other.jwt), 404, 'not_found');
    });

    // Regression: on PostgreSQL a change transaction took the change log's lock only after locking a
    // token's row, so a revocation and a rotation (or an app's deletion and the rotation of its
    // token) each waited for the other; PostgreSQL aborted one and the client got 503.
    it('a revocation or an app deletion racing a rotation was a deadlock (503) on PostgreSQL: now one waits for the other', async () => {
      const race = async () => {
        const first = await createApiToken(t, user.jwt);
        const second = (await json(t, 'POST', `/api/tokens/${first.id}/rotate`, { grace_seconds: 600 }, user.jwt)).json() as { id: string };
        const [rotated, revoked] = await Promise.all([
          json(t, 'POST', `/api/tokens/${second.id}/rotate`, {}, user.jwt),
          json(t, 'DELETE', `/api/tokens/${first.id}`, undefined, user.jwt),
        ]);
        // Whichever commits first, the other finds what it left (a rotation ends its predecessor's grace).
        expect([201, 404], rotated.body).toContain(rotated.statusCode);
        expect([204, 404], revoked.body).toContain(revoked.statusCode);
        const app = await registerApp(t, user.jwt);
        const [appRotated, deleted] = await Promise.all([
          json(t, 'POST', `/api/tokens/${app.token_id}/rotate`, {}, user.jwt),
          json(t, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt),
        ]);
        expect(deleted.statusCode, deleted.body).toBe(204);
        if (appRotated.statusCode !== 201) expectProblem(appRotated, 404, 'not_found');
      };
      // Several races at once, so the two transactions of one race overlap in the pool.
      for (let round = 0; round < 16; round++) await Promise.all(Array.from({ length: 6 }, race));
    });

    // Regression: a value out of range was "is invalid", and 604800.5 got three errors for the one
    // field; now each bad field is named once, with the first rule it breaks in plain words.
    it.each([
      ['a negative grace', { grace_seconds: -1 }, 'grace_seconds', 'must be at least 0'],
      ['a grace over a week', { grace_seconds: 604_801 }, 'grace_seconds', 'must be at most 604800'],
      ['a fractional grace', { grace_seconds: 1.5 }, 'grace_seconds', 'must be an integer'],
      ['a fractional grace over a week', { grace_seconds: 604_800.5 }, 'grace_seconds', 'must be an integer'],
      ['a grace given as a string', { grace_seconds: '60' }, 'grace_seconds', 'must be an integer'],
      ['an unknown field', { grace: 60 }, 'grace', 'is not a known field'],
    ])('400 for %s, and nothing is rotated', async (_name, body, field, message) => {
      const old = await createApiToken(t, user.jwt);
      const problem = expectProblem(await json(t, 'POST', `/api/tokens/${old.id}/rotate`, body, user.jwt), 400, 'validation_failed');
      expect(problem.errors).toEqual([{ field, message }]);
      expect((await json(t, 'GET', '/api/me', undefined, old.token)).statusCode).toBe(200);
    });

    it("needs a user token; someone else's token is 404", async () => {
      const created = await createApiToken(t, user.jwt, { scopes: ['tokens:read'] });
      expectInsufficientScope(await json(t, 'POST', `/api/tokens/${created.id}/rotate`, {}, created.token), '*');
      expectProblem(await json(t, 'POST', `/api/tokens/${created.id}/rotate`, {}, other.jwt), 404, 'not_found');
      expect((await json(t, 'GET', '/api/me', undefined, created.token)).statusCode).toBe(200);
    });
  });

  describe('GET /api/apps/{id}/tokens', () => {
    it("lists the app's active tokens, newest first, never a value", async () => {
      const app = await registerApp(t, user.jwt);
      clock.advance(1000);
      const second = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['10.0.0.0/8'] }, user.jwt)).json();
      clock.advance(1000);
      const third = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, {}, user.jwt)).json();
      await json(t, 'DELETE', `/api/tokens/${third.token_id}`, undefined, user.jwt);
      const res = await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      const { tokens } = res.json();
      expect(tokens.map((x: { id: string }) => x.id)).toEqual([second.token_id, app.token_id]);
      expect(tokens[1]).toEqual({
        id: app.token_id,
        hint: `rza_${app.token.slice(-4)}`,
        scopes: [],
        created_at: expect.any(String),
        expires_at: null,
        last_used_at: null,
        state: 'active',
        revoked_at: null,
      });
      expect(res.body).not.toContain(app.token);
    });

    it('an API token needs apps:read; app tokens are refused; another user\'s app is 404', async () => {
      const app = await registerApp(t, user.jwt);
      const reader = await createApiToken(t, user.jwt, { scopes: ['apps:read'] });
      const writer = await createApiToken(t, user.jwt, { scopes: ['apps:write'] });
      expect((await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, reader.token)).statusCode).toBe(200);
      expectInsufficientScope(await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, writer.token), 'apps:read');
      expectInsufficientScope(await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, app.token), 'apps:read');
      expectProblem(await json(t, 'GET', `/api/apps/${app.id}/tokens`, undefined, other.jwt), 404, 'not_found');
      expectProblem(await json(t, 'GET', `/api/apps/nope/tokens`, undefined, user.jwt), 404, 'not_found');
    });
  });

  describe('allowed_cidrs at creation', () => {
    it('stored in canonical form and enforced against the client address', async () => {
      const res = await json(t, 'POST', '/api/tokens', { name: 'net', allowed_cidrs: ['192.0.2.0/24', '2001:DB8::/32', '198.51.100.4'] }, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      const { token, allowed_cidrs } = res.json();
      expect(allowed_cidrs).toEqual(['192.0.2.0/24', '2001:db8::/32', '198.51.100.4/32']);
      expect((await json(t, 'GET', '/api/me', undefined, token, '192.0.2.77')).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, token, '::ffff:192.0.2.78')).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, token, '2001:db8:ffff::1')).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/me', undefined, token, '198.51.100.4')).statusCode).toBe(200);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token, '198.51.100.5'));
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token, '2001:db9::1'));
    });

    // Regression: networks were stored as typed (`127.0.0.5/8`, `2001:0db8:0000::/48`), so the detail
    // view, the audit log and equality checks showed one network under many spellings.
    it('with the host bits cleared and IPv6 written as RFC 5952 does, at creation and in PATCH', async () => {
      const res = await json(t, 'POST', '/api/tokens', {
        name: 'spellings',
        allowed_cidrs: ['127.0.0.5/8', '2001:0DB8:0000::/48', '2001:db8:1::ffff/120', '::FFFF:198.51.100.7', '10.1.2.3/12', '10.0.0.9/12', '1:0:0:2:0:0:0:3'],
      }, user.jwt);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().allowed_cidrs).toEqual(['127.0.0.0/8', '2001:db8::/48', '2001:db8:1::ff00/120', '::ffff:198.51.100.7/128', '10.0.0.0/12', '1:0:0:2::3/128']);
      const { id, token } = res.json();
      expect((await json(t, 'GET', '/api/me', undefined, token, '127.200.1.1')).statusCode).toBe(200);
      const narrowed = await json(t, 'PATCH', `/api/tokens/${id}`, { allowed_cidrs: ['127.255.255.255/9', '2001:db8:0:0:0:0:0:1'] }, user.jwt);
      expect(narrowed.json().allowed_cidrs).toEqual(['127.128.0.0/9', '2001:db8::1/128']);
      expect((await json(t, 'GET', `/api/tokens/${id}`, undefined, user.jwt)).json().allowed_cidrs).toEqual(['127.128.0.0/9', '2001:db8::1/128']);
      expectInvalidToken(await json(t, 'GET', '/api/me', undefined, token, '127.0.0.1'));
      expect((await json(t, 'GET', '/api/me', undefined, token, '127.200.1.1')).statusCode).toBe(200);
    });

    it.each([
      ['a prefix too long', ['10.0.0.0/33']],
      ['a prefix that is no number', ['10.0.0.0/x']],
      ['no address', ['/24']],
      ['a host name', ['example.com/24']],
      ['a zone id', ['fe80::1%eth0/64']],
      ['too many networks', Array.from({ length: 21 }, (_, i) => `10.0.${i}.0/24`)],
      ['an overlong item', [`${'1'.repeat(60)}/8`]],
      ['an empty list', []],
      ['not a list', '10.0.0.0/8'],
      // Regression: trimmed and stored, where the contract trims strings only where it says so.
      ['a network with a space after it', ['10.0.0.0/8 ']],
    ])('400 naming allowed_cidrs for %s, on both creation routes', async (_name, cidrs) => {
      const api = expectProblem(await json(t, 'POST', '/api/tokens', { name: 'x', allowed_cidrs: cidrs }, user.jwt), 400, 'validation_failed');
      expect(fieldsOf(api).every((f) => f.startsWith('allowed_cidrs'))).toBe(true);
      const app = await registerApp(t, user.jwt);
      const issued = expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: cidrs }, user.jwt), 400, 'validation_failed');
      expect(fieldsOf(issued).every((f) => f.startsWith('allowed_cidrs'))).toBe(true);
    });

    it('an app token issued with networks is refused from elsewhere', async () => {
      const app = await registerApp(t, user.jwt);
      const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { allowed_cidrs: ['10.0.0.0/8'] }, user.jwt)).json();
      expect((await json(t, 'GET', `/api/apps/${app.id}`, undefined, issued.token, '10.9.9.9')).statusCode).toBe(200);
      expectInvalidToken(await json(t, 'GET', `/api/apps/${app.id}`, undefined, issued.token, '11.0.0.1'));
    });
  });
});

describe('usage is coalesced, not written per request', () => {
  it('the detail shows this instance’s unflushed use; a flush writes it for every instance', async () => {
    const dir = tempDir();
    const env = { LAST_USED_FLUSH_MS: '3600000' };
    const first = await startTestApp({ dir: dir.dir, env });
    try {
      const user = await signup(first);
      const created = await createApiToken(first, user.jwt, { scopes: ['apps:read'] });
      for (let i = 0; i < 20; i++) expect((await json(first, 'GET', '/api/apps', undefined, created.token, '203.0.113.42')).statusCode).toBe(200);
      const stored = () =>
        first.services.database.db.selectFrom('tokens').select(['last_used_at', 'last_used_ip']).where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(await stored()).toEqual({ last_used_at: null, last_used_ip: null });
      expect((await json(first, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json()).toMatchObject({
        last_used_ip: '203.0.113.42',
        scopes_used: ['apps:read'],
      });
      await first.close();
      const second = await startTestApp({ dir: dir.dir, env });
      try {
        const detail = (await json(second, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json();
        expect(detail).toMatchObject({ last_used_ip: '203.0.113.42', scopes_used: ['apps:read'], last_used_at: expect.any(String) });
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});
