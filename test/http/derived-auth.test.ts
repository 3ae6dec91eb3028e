import { createHash } from 'node:crypto';
import { attenuate, derive, inspect, readChild } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, expectInsufficientScope, expectInvalidToken, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { caveat, newKek, resign, signChild, tamper } from '../helpers/derived.js';
import { checksum } from '../../packages/token/src/bytes.js';
import { comparable } from '../helpers/jwt-craft.js';

const now = () => Math.floor(Date.now() / 1000);
const me = (t: TestApp, token: string, address?: string) => json(t, 'GET', '/api/me', undefined, token, address);

/** A body byte of `token` flipped, with the checksum recomputed: only the HMAC can catch it. */
function flipByte(token: string, i: number): string {
  const body = Buffer.from(token.slice(4, -6), 'base64url');
  body[i] = (body[i] ?? 0) ^ 0x01;
  const head = `rzd_${body.toString('base64url')}`;
  return head + checksum(head);
}

/** Children at rz-auth (contract §14.4–§14.6). */
describe('derived tokens at rz-auth', () => {
  let t: TestApp;
  let user: TestUser;
  let parent: { id: string; token: string };
  beforeAll(async () => {
    t = await startTestApp({ env: { DERIVE_KEK: newKek() } });
    user = await signup(t);
    parent = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'], derivable: true });
  });
  afterAll(() => t.close());

  it('GET /api/me: the parent type and id, the effective scopes and expiry, and auth.derived', async () => {
    const child = derive(parent.token, { ttl: '15m', scopes: ['apps:read', 'webhooks:read'], label: 'ci run 4411' });
    const res = await me(t, child);
    expect(res.statusCode, res.body).toBe(200);
    const { auth, email } = res.json();
    const read = inspect(child);
    expect(email).toBe(user.email);
    expect(auth).toEqual({
      type: 'api_token',
      token_id: parent.id,
      scopes: ['apps:read'],
      expires_at: new Date(read.exp * 1000).toISOString(),
      derived: { child_id: read.childId, labels: ['ci run 4411'], iat: new Date((read.exp - 900) * 1000).toISOString() },
    });
    // Attenuated twice: the rights shrink each time, the child id stays.
    const narrower = attenuate(attenuate(child, { ttl: 60, label: 'test agent' }), { scopes: [] });
    const again = (await me(t, narrower)).json().auth;
    expect(again.scopes).toEqual([]);
    expect(again.derived).toMatchObject({ child_id: read.childId, labels: ['ci run 4411', 'test agent'] });
    expect(Date.parse(again.expires_at)).toBeLessThanOrEqual((now() + 60) * 1000);
  });

  describe('integrity', () => {
    it('every body byte flipped, with the checksum recomputed → the one invalid_token', async () => {
      const child = derive(parent.token, { ttl: 600, scopes: ['apps:read'] });
      const size = Buffer.from(child.slice(4, -6), 'base64url').length;
      for (let i = 0; i < size; i++) expectInvalidToken(await me(t, flipByte(child, i)));
    });

    it('a dropped last or middle caveat, two caveats reordered → 401', async () => {
      const child = derive(parent.token, { ttl: 600, scopes: ['apps:read'], label: 'x', aud: ['rz-auth'] });
      expect((await me(t, child)).statusCode).toBe(200);
      expectInvalidToken(await me(t, tamper(child, (raw) => raw.slice(0, -1))));
      expectInvalidToken(await me(t, tamper(child, (raw) => [raw[0], raw[1], raw[3], raw[4]] as Uint8Array[])));
      expectInvalidToken(await me(t, tamper(child, (raw) => [raw[0], raw[2], raw[1], raw[3], raw[4]] as Uint8Array[])));
    });

    it('a child signed with a key made from the parent\'s stored digest, not its value (the database-leak forgery) → 401', async () => {
      const child = readChild(derive(parent.token, { ttl: 600 }));
      if (!child) throw new Error('unreadable');
      const digest = createHash('sha256').update(parent.token).digest('hex');
      const fromDigest = createHash('sha256').update(digest).digest();
      const forged = signChild(child.parentRef, child.childId, child.raw, fromDigest);
      expectInvalidToken(await me(t, forged));
      const fromHmacOfDigest = signChild(child.parentRef, child.childId, child.raw, new Uint8Array(Buffer.from(digest, 'hex')));
      expectInvalidToken(await me(t, fromHmacOfDigest));
    });

    it('a parent that is not derivable: its children are 401', async () => {
      const plain = await createApiToken(t, user.jwt, { scopes: ['apps:read'] });
      expectInvalidToken(await me(t, derive(plain.token, { ttl: 600 })));
    });
  });

  describe('widening attempts', () => {
    it('a scope the parent lacks is not granted; a later exp does not extend; a second, earlier iat is ignored', async () => {
      const child = derive(parent.token, { ttl: 120, scopes: ['apps:read'] });
      const wider = attenuate(child, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
      expect((await me(t, wider)).json().auth.scopes).toEqual(['apps:read']);
      const later = attenuate(child, { ttl: 3600 });
      expect((await me(t, later)).json().auth.expires_at).toBe((await me(t, child)).json().auth.expires_at);
      const earlierIat = resign(parent.token, child, (raw) => [...raw, caveat({ type: 'iat', value: now() - 100_000 })]);
      expect((await me(t, earlierIat)).json().auth.derived.iat).toBe((await me(t, child)).json().auth.derived.iat);
    });

    it('first caveat not iat, no exp, exp − iat over DERIVED_MAX_TTL_S, iat 61 s ahead → 401', async () => {
      const child = derive(parent.token, { ttl: 600 });
      const iat = caveat({ type: 'iat', value: now() });
      const exp = caveat({ type: 'exp', value: now() + 600 });
      const label = caveat({ type: 'label', value: 'x' });
      expectInvalidToken(await me(t, resign(parent.token, child, () => [exp, iat])));
      expectInvalidToken(await me(t, resign(parent.token, child, () => [iat, label])));
      expectInvalidToken(await me(t, resign(parent.token, child, () => [iat, caveat({ type: 'exp', value: now() + 604_801 })])));
      expectInvalidToken(await me(t, resign(parent.token, child, () => [caveat({ type: 'iat', value: now() + 61 }), exp])));
      expect((await me(t, resign(parent.token, child, () => [caveat({ type: 'iat', value: now() + 30 }), exp]))).statusCode).toBe(200);
    });
  });

  describe('grammar', () => {
    const raw = (text: string) => new Uint8Array(Buffer.from(text));
    it.each([
      ['an unknown caveat key', '{"foo":1}'],
      ['two members', '{"exp":1,"nbf":1}'],
      ['a duplicate key', '{"label":"a","label":"b"}'],
      ['1e9 for a time', '{"nbf":1e9}'],
      ['1.5 for a time', '{"nbf":1.5}'],
      ['a label with a control character', '{"label":"a\\u0007b"}'],
    ])('%s → 401', async (_name, text) => {
      const child = derive(parent.token, { ttl: 600 });
      expectInvalidToken(await me(t, resign(parent.token, child, (r) => [...r, raw(text)])));
    });

    it('a 513-byte caveat → 401 (the format refuses to write it; written by hand)', async () => {
      const child = readChild(derive(parent.token, { ttl: 600 }));
      if (!child) throw new Error('unreadable');
      const big = raw(`{"label":"${'a'.repeat(501)}"}`);
      expect(big.length).toBe(513);
      const parts = [Buffer.from([1]), child.parentRef, child.childId, Buffer.from([3]), ...[...child.raw, big].flatMap((c) => [Buffer.from([c.length >> 8, c.length & 255]), c]), child.tag];
      const head = `rzd_${Buffer.concat(parts).toString('base64url')}`;
      expectInvalidToken(await me(t, head + checksum(head)));
    });

    it('17 caveats and 4,097 characters → 401', async () => {
      const child = derive(parent.token, { ttl: 600 });
      expect(() => resign(parent.token, child, (r) => [...r, ...Array.from({ length: 15 }, () => raw('{"label":"x"}'))])).toThrow();
      const seventeen = `rzd_${'A'.repeat(200)}`;
      expectInvalidToken(await me(t, seventeen));
      expectInvalidToken(await me(t, `rzd_${'A'.repeat(4093)}`));
    });
  });

  describe('where it can go', () => {
    it('the GET routes its scopes allow; every other route, and what API tokens cannot read, → 403 insufficient_scope', async () => {
      const child = derive(parent.token, { ttl: 600 });
      expect((await json(t, 'GET', '/api/apps', undefined, child)).statusCode).toBe(200);
      expect((await json(t, 'GET', '/api/tokens', undefined, child)).statusCode).toBe(200);
      expect((await json(t, 'GET', `/api/tokens/${parent.id}`, undefined, child)).statusCode).toBe(200);
      const noTokens = derive(parent.token, { ttl: 600, scopes: ['apps:read'] });
      expectInsufficientScope(await json(t, 'GET', '/api/tokens', undefined, noTokens), 'tokens:read');
      for (const [method, url, body] of [
        ['POST', '/api/tokens', { name: 'x' }],
        ['POST', `/api/tokens/${parent.id}/rotate`, {}],
        ['PATCH', `/api/tokens/${parent.id}`, { name: 'y' }],
        ['DELETE', `/api/tokens/${parent.id}`, undefined],
        ['POST', '/api/apps', { name: 'x' }],
        ['GET', '/api/audit', undefined],
        ['GET', '/api/auth/sessions', undefined],
        ['GET', '/api/me/mfa', undefined],
      ] as const) {
        const res = await json(t, method, url, body, child);
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
        expect(res.json().code).toBe('insufficient_scope');
      }
    });

    it('every operation of the API document that is not one of §14.6\'s GET routes → 403 insufficient_scope', async () => {
      const child = derive(parent.token, { ttl: 600 });
      const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId: string; security?: ReadonlyArray<Record<string, unknown>> }>> };
      const allowed = new Set(['getMe', 'listApps', 'getApp', 'listAppTokens', 'listApiTokens', 'getToken']);
      const guarded = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })))
        .filter(({ op }) => op.security !== undefined && op.security.length > 0 && !allowed.has(op.operationId));
      expect(guarded.length).toBeGreaterThan(30);
      for (const { method, path } of guarded) {
        const url = path.replace(/\{[^}]+\}/g, parent.id);
        const res = await t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${child}`, 'content-type': 'application/json' }, payload: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
        expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(403);
        expect(res.json().code, `${method} ${path}`).toBe('insufficient_scope');
      }
    });

    it('an app token child reads its own app as its parent can', async () => {
      const app = await registerApp(t, user.jwt);
      const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { derivable: true }, user.jwt)).json();
      const res = await me(t, derive(issued.token, { ttl: 600 }));
      expect(res.json().auth).toMatchObject({ type: 'app_token', token_id: issued.token_id });
      expect(res.json().app).toEqual({ id: app.id, name: app.name });
      expect(res.json().email).toBeUndefined();
    });

    it('aud without rz-auth → 401 at rz-auth; with it, or an intersection holding it → 200', async () => {
      expectInvalidToken(await me(t, derive(parent.token, { ttl: 600, aud: ['scoreboard'] })));
      const both = derive(parent.token, { ttl: 600, aud: ['rz-auth', 'scoreboard'] });
      expect((await me(t, both)).json().auth.derived.aud).toEqual(['rz-auth', 'scoreboard']);
      expectInvalidToken(await me(t, attenuate(both, { aud: ['scoreboard'] })));
      expect((await me(t, attenuate(both, { aud: ['rz-auth'] }))).json().auth.derived.aud).toEqual(['rz-auth']);
    });

    it('cidrs: inside → 200; outside, or outside the parent\'s own list → the byte-identical invalid_token', async () => {
      const child = derive(parent.token, { ttl: 600, cidrs: ['198.51.100.0/24'] });
      expect((await me(t, child, '198.51.100.7')).statusCode).toBe(200);
      const outside = await me(t, child, '203.0.113.9');
      const unknown = await me(t, flipByte(child, 40));
      expectInvalidToken(outside);
      expect(comparable(outside)).toEqual(comparable(unknown));
      expect(comparable(outside)).toEqual(comparable(await me(t, 'not-a-token', '203.0.113.9')));
      const listed = await createApiToken(t, user.jwt, { allowed_cidrs: ['198.51.100.0/25'], derivable: true });
      const wide = derive(listed.token, { ttl: 600, cidrs: ['198.51.100.0/24'] });
      expect((await me(t, wide, '198.51.100.7')).statusCode).toBe(200);
      expectInvalidToken(await me(t, wide, '198.51.100.200'));
    });
  });

  describe('revocation at rz-auth', () => {
    const derivable = async () => createApiToken(t, user.jwt, { scopes: ['apps:read'], derivable: true });

    it('parent revoked, rotated without grace, expired, derivable turned off → its children 401 on the next request', async () => {
      const revoked = await derivable();
      const a = derive(revoked.token, { ttl: 600 });
      expect((await me(t, a)).statusCode).toBe(200);
      expect((await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(t, a));

      const rotated = await derivable();
      const b = derive(rotated.token, { ttl: 600 });
      expect((await json(t, 'POST', `/api/tokens/${rotated.id}/rotate`, { derivable: true }, user.jwt)).statusCode).toBe(201);
      expectInvalidToken(await me(t, b));

      const off = await derivable();
      const c = derive(off.token, { ttl: 600 });
      expect((await me(t, c)).statusCode).toBe(200);
      expect((await json(t, 'PATCH', `/api/tokens/${off.id}`, { derivable: false }, user.jwt)).statusCode).toBe(200);
      expectInvalidToken(await me(t, c));

      const soon = await createApiToken(t, user.jwt, { derivable: true, expires_at: new Date(Date.now() + 2000).toISOString() });
      const d = derive(soon.token, { ttl: 600 });
      expect((await me(t, d)).json().auth.expires_at).toBe(new Date(Math.floor(Date.parse(soon.expires_at ?? '') / 1000) * 1000).toISOString());
      await new Promise((resolve) => setTimeout(resolve, 2100));
      expectInvalidToken(await me(t, d));
    });

    it('the parent narrowed: its children narrow on the next request', async () => {
      const p = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'tokens:read'], derivable: true });
      const child = derive(p.token, { ttl: 600 });
      expect((await me(t, child)).json().auth.scopes).toEqual(['apps:read', 'tokens:read']);
      expect((await json(t, 'PATCH', `/api/tokens/${p.id}`, { scopes: ['apps:read'] }, user.jwt)).statusCode).toBe(200);
      expect((await me(t, child)).json().auth.scopes).toEqual(['apps:read']);
    });

    it('the app of an app-token parent deleted → its children 401', async () => {
      const app = await registerApp(t, user.jwt);
      const issued = (await json(t, 'POST', `/api/apps/${app.id}/tokens`, { derivable: true }, user.jwt)).json();
      const child = derive(issued.token, { ttl: 600 });
      expect((await me(t, child)).statusCode).toBe(200);
      expect((await json(t, 'DELETE', `/api/apps/${app.id}`, undefined, user.jwt)).statusCode).toBe(204);
      expectInvalidToken(await me(t, child));
    });

    it('the owner deleted → children 401', async () => {
      const other = await signup(t);
      const p = await createApiToken(t, other.jwt, { derivable: true });
      const child = derive(p.token, { ttl: 600 });
      expect((await me(t, child)).statusCode).toBe(200);
      const res = await json(t, 'DELETE', '/api/me', { password: other.password }, other.jwt);
      expect(res.statusCode, res.body).toBe(204);
      expectInvalidToken(await me(t, child));
    });

    it('a revoked child id: it and its attenuations die, its siblings live', async () => {
      const p = await derivable();
      const child = derive(p.token, { ttl: 600 });
      const narrower = attenuate(child, { label: 'x' });
      const sibling = derive(p.token, { ttl: 600 });
      await t.services.database.db.insertInto('derived_revocations').values({ token_id: p.id, child_id: inspect(child).childId, revoked_at: new Date().toISOString(), keep_until: new Date(Date.now() + 3_600_000).toISOString() }).execute();
      expectInvalidToken(await me(t, child));
      expectInvalidToken(await me(t, narrower));
      expect((await me(t, sibling)).statusCode).toBe(200);
    });

    it('children_revoked_before: children derived before it die, later ones work', async () => {
      const p = await derivable();
      const old = derive(p.token, { ttl: 600, now: now() - 10 });
      await t.services.database.db.updateTable('tokens').set({ children_revoked_before: new Date((now() - 5) * 1000).toISOString() }).where('id', '=', p.id).execute();
      expectInvalidToken(await me(t, old));
      expect((await me(t, derive(p.token, { ttl: 600 }))).statusCode).toBe(200);
    });
  });
});
