import { derive, parentRef } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp, tempDir } from '../helpers/app.js';
import { createApiToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { newKek } from '../helpers/derived.js';

const fieldsOf = (problem: Record<string, unknown>) => (problem.errors as Array<{ field: string }>).map((e) => e.field);

/** Derivable parents (contract §14.3): creation, rotation, narrowing, and what lists show. */
describe('derivable parents', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: { DERIVE_KEK: newKek() } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  const row = (id: string) => t.services.database.db.selectFrom('tokens').select(['derivable', 'derive_key', 'parent_ref']).where('id', '=', id).executeTakeFirstOrThrow();

  it('POST /api/tokens with derivable: true stores the parent reference and the key sealed; the lists show it', async () => {
    const created = await createApiToken(t, user.jwt, { scopes: ['tokens:read'], derivable: true });
    const stored = await row(created.id);
    expect(stored).toMatchObject({ derivable: 1, parent_ref: parentRef(created.token) });
    expect(stored.derive_key).toMatch(/^sealed:v1:/);

    const detail = await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toMatchObject({ derivable: true, children_revoked_before: null, children_seen: 0 });
    const list = (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json();
    expect(list.tokens.find((x: { id: string }) => x.id === created.id)).toMatchObject({ derivable: true, children_revoked_before: null, children_seen: 0 });
    // Neither the key nor the reference is ever shown.
    for (const body of [detail.body, JSON.stringify(list)]) {
      expect(body).not.toContain(stored.derive_key);
      expect(body).not.toContain(parentRef(created.token));
    }
  });

  it('is off by default', async () => {
    const created = await createApiToken(t, user.jwt);
    expect(await row(created.id)).toEqual({ derivable: 0, derive_key: null, parent_ref: null });
    expect((await json(t, 'GET', `/api/tokens/${created.id}`, undefined, user.jwt)).json()).toMatchObject({ derivable: false, children_seen: 0 });
  });

  it('POST /api/apps/{id}/tokens takes derivable too', async () => {
    const app = await registerApp(t, user.jwt);
    const res = await json(t, 'POST', `/api/apps/${app.id}/tokens`, { derivable: true }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
    const { token_id: id, token } = res.json();
    expect(await row(id)).toMatchObject({ derivable: 1, parent_ref: parentRef(token) });
  });

  it('rotation makes the new token derivable only when asked; the old keeps its own', async () => {
    const created = await createApiToken(t, user.jwt, { derivable: true });
    const plain = await json(t, 'POST', `/api/tokens/${created.id}/rotate`, { grace_seconds: 60 }, user.jwt);
    expect(plain.statusCode, plain.body).toBe(201);
    expect(await row(plain.json().id)).toMatchObject({ derivable: 0, derive_key: null });
    expect(await row(created.id)).toMatchObject({ derivable: 1 });

    const again = await json(t, 'POST', `/api/tokens/${plain.json().id}/rotate`, { derivable: true }, user.jwt);
    expect(again.statusCode, again.body).toBe(201);
    expect(await row(again.json().id)).toMatchObject({ derivable: 1, parent_ref: parentRef(again.json().token) });
  });

  it('PATCH derivable: false is a narrowing that forgets the key and announces token.updated with derivable: false', async () => {
    const created = await createApiToken(t, user.jwt, { scopes: ['apps:read'], derivable: true });
    const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, { derivable: false }, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ derivable: false });
    expect(await row(created.id)).toMatchObject({ derivable: 0, derive_key: null });
    const change = await t.services.database.db.selectFrom('changes').select('event').where('ref', '=', created.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(change.event ?? '{}')).toEqual({ type: 'token.updated', data: { token_id: created.id, scopes: ['apps:read'], derivable: false } });
    const audit = await t.services.database.db.selectFrom('audit_events').select('details').where('subject_id', '=', created.id).where('type', '=', 'token.updated').executeTakeFirstOrThrow();
    expect(JSON.parse(audit.details)).toMatchObject({ derivable: false });
  });

  it('PATCH derivable: true on a token that is not derivable is a widening: 400 naming derivable', async () => {
    const created = await createApiToken(t, user.jwt);
    const res = await json(t, 'PATCH', `/api/tokens/${created.id}`, { derivable: true }, user.jwt);
    expect(fieldsOf(expectProblem(res, 400, 'validation_failed'))).toEqual(['derivable']);
    expect(await row(created.id)).toMatchObject({ derivable: 0 });
  });
});

describe('derivable parents without DERIVE_KEK', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('creation, app token issue and rotation asking for derivable: 400 validation_failed naming derivable', async () => {
    expect(fieldsOf(expectProblem(await json(t, 'POST', '/api/tokens', { name: 'x', derivable: true }, user.jwt), 400, 'validation_failed'))).toEqual(['derivable']);
    const app = await registerApp(t, user.jwt);
    expect(fieldsOf(expectProblem(await json(t, 'POST', `/api/apps/${app.id}/tokens`, { derivable: true }, user.jwt), 400, 'validation_failed'))).toEqual(['derivable']);
    const created = await createApiToken(t, user.jwt);
    expect(fieldsOf(expectProblem(await json(t, 'POST', `/api/tokens/${created.id}/rotate`, { derivable: true }, user.jwt), 400, 'validation_failed'))).toEqual(['derivable']);
    // derivable: false asks for nothing the server lacks.
    expect((await json(t, 'POST', '/api/tokens', { name: 'x', derivable: false }, user.jwt)).statusCode).toBe(201);
  });
});

describe('DERIVE_KEK rotation at start-up', () => {
  it('refuses to start without a key that opens the derivable tokens, opens them under DERIVE_KEK_OLD and re-wraps each on use', async () => {
    const temp = tempDir();
    const first = newKek();
    try {
      const t = await startTestApp({ dir: temp.dir, env: { DERIVE_KEK: first } });
      const user = await signup(t);
      const created = await createApiToken(t, user.jwt, { derivable: true });
      await t.close().catch(() => {});
      await expect(startTestApp({ dir: temp.dir })).rejects.toThrow(/derivable token\(s\) exist but DERIVE_KEK is not set/);
      await expect(startTestApp({ dir: temp.dir, env: { DERIVE_KEK: newKek() } })).rejects.toThrow(/neither DERIVE_KEK nor DERIVE_KEK_OLD/);
      const second = newKek();
      const rotated = await startTestApp({ dir: temp.dir, env: { DERIVE_KEK: second, DERIVE_KEK_OLD: first } });
      const read = () => rotated.services.database.db.selectFrom('tokens').select('derive_key').where('id', '=', created.id).executeTakeFirstOrThrow();
      const before = (await read()).derive_key;
      // Used once: the child works under the old key, and its parent's key is sealed again under the new one.
      expect((await json(rotated, 'GET', '/api/me', undefined, derive(created.token, { ttl: 60 }))).statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const after = (await read()).derive_key;
      expect(after).toMatch(/^sealed:v1:/);
      expect(after).not.toBe(before);
      await rotated.close();
      // The old key can go now.
      const alone = await startTestApp({ dir: temp.dir, env: { DERIVE_KEK: second } });
      expect((await json(alone, 'GET', '/api/me', undefined, derive(created.token, { ttl: 60 }))).statusCode).toBe(200);
      await alone.close();
    } finally {
      temp.remove();
    }
  });
});
