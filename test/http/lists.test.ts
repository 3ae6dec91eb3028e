import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeliveries } from '../../src/webhooks/store.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';

const URL_OK = 'https://93.184.215.14/hooks/rz';

type Item = { id: string };
type Page = { next_cursor: string | null } & Record<string, unknown>;

/**
 * Each list route, its array's key, and how to add one more item to it for `user` (the clock moves
 * a millisecond first, so items have distinct times, as they would in use).
 */
interface ListRoute {
  readonly name: string;
  readonly key: string;
  url(user: TestUser): Promise<string> | string;
  add(user: TestUser): Promise<string>;
}

describe('lists: limit, cursor, next_cursor; stable under writes between pages', () => {
  const clock = new TestClock();
  let t: TestApp;
  const apps = new Map<string, string>();
  const hooks = new Map<string, string>();
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { MAX_API_TOKENS_PER_USER: '1000', MAX_TOKENS_PER_APP: '1000', MAX_WEBHOOKS_PER_USER: '50' } });
  });
  afterAll(() => t.close());

  const created = async (res: Awaited<ReturnType<typeof json>>, key = 'id'): Promise<string> => {
    expect(res.statusCode, res.body).toBe(201);
    return res.json()[key] as string;
  };
  const appOf = async (user: TestUser): Promise<string> => {
    if (!apps.has(user.id)) apps.set(user.id, (await registerApp(t, user.jwt)).id);
    return apps.get(user.id) ?? '';
  };
  const hookOf = async (user: TestUser): Promise<string> => {
    if (!hooks.has(user.id)) hooks.set(user.id, await created(await json(t, 'POST', '/api/webhooks', { url: URL_OK, event_types: ['token.created'] }, user.jwt)));
    return hooks.get(user.id) ?? '';
  };

  const ROUTES: ListRoute[] = [
    { name: 'GET /api/tokens', key: 'tokens', url: () => '/api/tokens', add: async (u) => (await createApiToken(t, u.jwt)).id },
    { name: 'GET /api/apps', key: 'apps', url: () => '/api/apps', add: async (u) => (await registerApp(t, u.jwt)).id },
    {
      name: 'GET /api/apps/{id}/tokens',
      key: 'tokens',
      url: async (u) => `/api/apps/${await appOf(u)}/tokens`,
      add: async (u) => created(await json(t, 'POST', `/api/apps/${await appOf(u)}/tokens`, undefined, u.jwt), 'token_id'),
    },
    { name: 'GET /api/webhooks', key: 'webhooks', url: () => '/api/webhooks', add: async (u) => created(await json(t, 'POST', '/api/webhooks', { url: URL_OK, event_types: ['token.created'] }, u.jwt)) },
    {
      name: 'GET /api/auth/sessions',
      key: 'sessions',
      url: () => '/api/auth/sessions',
      add: async (u) => {
        const res = await json(t, 'POST', '/api/auth/login', { email: u.email, password: u.password });
        return JSON.parse(Buffer.from((res.json().token as string).split('.')[1] ?? '', 'base64url').toString()).sid as string;
      },
    },
    {
      name: 'GET /api/webhooks/{id}/deliveries',
      key: 'deliveries',
      url: async (u) => `/api/webhooks/${await hookOf(u)}/deliveries`,
      // Queued as the dispatcher queues them: test deliveries through the API are capped at 3 pending.
      add: async (u) => {
        const delivery = { id: randomUUID(), endpointId: await hookOf(u), eventId: null, eventType: 'webhook.test' as const, payload: '{}', createdAt: new Date(clock.now()).toISOString() };
        await insertDeliveries(t.services.database.db, [delivery]);
        return delivery.id;
      },
    },
  ];

  /** What the route lists now, page by page with `limit`, and every next_cursor it answered. */
  async function walk(user: TestUser, route: ListRoute, limit: number, between?: () => Promise<void>): Promise<string[]> {
    const base = await route.url(user);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`;
      const res = await json(t, 'GET', `${base}${query}`, undefined, user.jwt);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as Page;
      const items = page[route.key] as Item[];
      expect(items.length).toBeLessThanOrEqual(limit);
      seen.push(...items.map((i) => i.id));
      cursor = page.next_cursor;
      if (cursor !== null) expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      if (between && seen.length === limit) await between();
    } while (cursor !== null);
    return seen;
  }

  async function seeded(route: ListRoute, count: number): Promise<{ user: TestUser; ids: string[] }> {
    const user = await signup(t);
    const ids: string[] = [];
    // Sessions: signup made one already; deliveries: none yet.
    for (let i = 0; i < count; i++) {
      clock.advance(1);
      ids.push(await route.add(user));
    }
    return { user, ids };
  }

  describe.each(ROUTES.map((r) => [r.name, r] as const))('%s', (_name, route) => {
    it('pages newest first; next_cursor is null on the last page; the default page is 50', async () => {
      const { user } = await seeded(route, 5);
      const all = await walk(user, route, 200);
      expect(all.length).toBeGreaterThanOrEqual(5);
      expect(await walk(user, route, 2)).toEqual(all);
      const first = (await json(t, 'GET', await route.url(user), undefined, user.jwt)).json() as Page;
      expect((first[route.key] as Item[]).map((i) => i.id)).toEqual(all);
      expect(first.next_cursor).toBeNull();
    });

    it('an item added or deleted between two pages makes no other item skip or repeat', async () => {
      const { user } = await seeded(route, 6);
      const before = await walk(user, route, 200);
      const seen = await walk(user, route, 2, async () => {
        clock.advance(1);
        await route.add(user);
      });
      // The item added after the first page is newer than it, so not on a later page; every item
      // listed before appears exactly once.
      expect(seen).toEqual(before);
    });

    it.each([
      ['limit', 'limit=0'],
      ['limit', 'limit=201'],
      ['limit', 'limit=abc'],
      ['limit', 'limit=1.5'],
      ['limit', 'limit=123456789'],
      ['cursor', 'cursor=not*base64'],
      ['cursor', `cursor=${Buffer.from('a123').toString('base64url')}`],
      ['cursor', `cursor=${Buffer.from('2026-11-21T09:30:00.000Z|not-a-uuid-at-all-but-thirty-six-ch').toString('base64url')}`],
      ['cursor', `cursor=${'A'.repeat(129)}`],
      ['cursor', `cursor=${'A'.repeat(100_000)}`],
    ])('400 naming %s for %s', async (field, query) => {
      const user = await signup(t);
      const res = await json(t, 'GET', `${await route.url(user)}?${query}`, undefined, user.jwt);
      const problem = expectProblem(res, 400, 'validation_failed');
      expect(problem.errors).toEqual([expect.objectContaining({ field: expect.stringMatching(new RegExp(`^(querystring/)?${field}$`)) })]);
    });

    it('a cursor respelt (a stray last character) is refused, not read as the same position', async () => {
      const { user } = await seeded(route, 3);
      const page = (await json(t, 'GET', `${await route.url(user)}?limit=1`, undefined, user.jwt)).json() as Page;
      const cursor = page.next_cursor ?? '';
      expect(cursor).not.toBe('');
      const res = await json(t, 'GET', `${await route.url(user)}?limit=1&cursor=${cursor}A`, undefined, user.jwt);
      expectProblem(res, 400, 'validation_failed');
    });
  });

  it("a cursor of another user's list shows only the caller's own items", async () => {
    const a = await seeded(ROUTES[0] as ListRoute, 3);
    const b = await seeded(ROUTES[0] as ListRoute, 3);
    const cursor = ((await json(t, 'GET', '/api/tokens?limit=1', undefined, a.user.jwt)).json() as Page).next_cursor;
    const res = await json(t, 'GET', `/api/tokens?cursor=${cursor}`, undefined, b.user.jwt);
    expect(res.statusCode).toBe(200);
    for (const item of (res.json() as Page).tokens as Item[]) expect(b.ids).toContain(item.id);
  });

  it('ended tokens leave the default list without moving the others between pages', async () => {
    const { user, ids } = await seeded(ROUTES[0] as ListRoute, 6);
    const seen = await walk(user, ROUTES[0] as ListRoute, 2, async () => {
      // Revoke one already shown and one not yet shown.
      await json(t, 'DELETE', `/api/tokens/${ids[5]}`, undefined, user.jwt);
      await json(t, 'DELETE', `/api/tokens/${ids[1]}`, undefined, user.jwt);
    });
    expect(seen).toEqual([ids[5], ids[4], ids[3], ids[2], ids[0]]);
  });
});
