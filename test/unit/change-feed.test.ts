import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed, type FeedEvent } from '../../src/changes/feed.js';
import { type ChangeSource, redisSource, sqliteSource } from '../../src/changes/sources.js';
import { ChangeStore } from '../../src/changes/store.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { SessionStore } from '../../src/account/session-store.js';
import { UserStore } from '../../src/account/user-store.js';
import { tempDir } from '../helpers/app.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const redisUp = await redisAvailable();

const open: Database[] = [];
const clients: Redis[] = [];
const dirs: Array<() => void> = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
  for (const redis of clients.splice(0)) redis.disconnect();
  for (const remove of dirs.splice(0)) remove();
});

/** Two connections to one SQLite file: this process's, and another process's that makes changes. */
async function twoConnections() {
  const dir = tempDir();
  dirs.push(dir.remove);
  const path = join(dir.dir, 'rz.db');
  const mine = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
  const theirs = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
  open.push(mine, theirs);
  await migrateToLatest(mine.db);
  return { mine, theirs };
}

async function startFeed(mine: Database, source: ChangeSource) {
  const errors: unknown[] = [];
  const feed = new ChangeFeed(new ChangeStore(mine.db), source, (error) => errors.push(error));
  const seen: FeedEvent[] = [];
  feed.subscribe((event) => {
    seen.push(event);
  });
  await feed.start();
  return { feed, seen, errors };
}

/** Revokes a new session through `db`, as another process would; returns the change's id. */
async function revokeElsewhere(db: Database): Promise<{ ref: string; id: number }> {
  const users = new UserStore(db.db);
  const sessions = new SessionStore(db.db);
  const user = { id: randomUUID(), email: `${randomUUID()}@example.com`, username: `u${randomUUID().slice(0, 8)}`, passwordHash: 'x', createdAt: '2026-11-21T00:00:00.000Z' };
  await users.insert(user);
  const ref = randomUUID();
  await sessions.insert({ id: ref, userId: user.id, createdAt: user.createdAt, expiresAt: '2026-11-22T00:00:00.000Z' });
  await sessions.revoke(ref, '2026-11-21T00:00:01.000Z');
  return { ref, id: await new ChangeStore(db.db).latestId() };
}

const resets = (seen: FeedEvent[]) => seen.filter((e) => e.kind === 'reset').length;

describe('change feed on SQLite', () => {
  async function sqliteFeed() {
    const { mine, theirs } = await twoConnections();
    let checks = 0;
    const dataVersion = mine.dataVersion ?? (() => 0);
    const started = await startFeed(mine, sqliteSource(() => (checks++, dataVersion())));
    return { ...started, mine, theirs, checks: () => checks };
  }

  it('checks the source once per turn of the event loop, however many requests arrive in it', async () => {
    const { feed, checks } = await sqliteFeed();
    const before = checks();
    for (let i = 0; i < 50; i++) void feed.sync();
    expect(checks() - before).toBe(1);
    await nextTurn();
    void feed.sync();
    expect(checks() - before).toBe(2);
  });

  it("applies another connection's change from the next turn on, with its id in the log", async () => {
    const { feed, theirs, seen } = await sqliteFeed();
    const change = await revokeElsewhere(theirs);
    await nextTurn();
    await feed.sync();
    expect(seen).toEqual([expect.objectContaining({ id: change.id, kind: 'session', ref: change.ref })]);
    expect(feed.cursor).toBe(change.id);
  });

  it('every request of the turn that found a change waits for it to be applied', async () => {
    const { feed, theirs, seen } = await sqliteFeed();
    const change = await revokeElsewhere(theirs);
    await nextTurn();
    const first = feed.sync();
    const second = feed.sync();
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    await second;
    expect(seen).toContainEqual(expect.objectContaining({ kind: 'session', ref: change.ref }));
  });

  it('hands every listener each change once, in log order, however reads and commits interleave', async () => {
    const { feed, mine, theirs, seen } = await sqliteFeed();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await revokeElsewhere(i % 2 ? mine : theirs)).id);
      if (i % 2) await feed.committed('session', 'x');
      else void feed.poll();
    }
    await feed.poll();
    expect(seen.map((e) => (e.kind === 'reset' ? 'reset' : e.id))).toEqual(ids);
  });

  it('a cursor older than the oldest change left (away longer than the retention window) starts every cache over', async () => {
    const { feed, theirs, seen } = await sqliteFeed();
    await revokeElsewhere(theirs);
    const newest = await revokeElsewhere(theirs);
    await new ChangeStore(theirs.db).prune('9999-01-01T00:00:00.000Z');
    await feed.poll();
    expect(seen.map((e) => e.kind)).toEqual(['reset', 'session']);
    expect(feed.cursor).toBe(newest.id);
  });

  it('a log whose ids end below the cursor (the database was replaced) starts every cache over', async () => {
    const { feed, mine, theirs, seen } = await sqliteFeed();
    await revokeElsewhere(theirs);
    await feed.poll();
    await theirs.db.deleteFrom('changes').execute();
    await feed.poll();
    expect(seen.map((e) => e.kind)).toEqual(['session', 'reset']);
    // Where the log now ends, for the event streams to stand there too.
    expect(seen[1]).toEqual({ kind: 'reset', ref: '', rewoundTo: 0 });
    expect(feed.cursor).toBe(0);
    const next = await revokeElsewhere(mine);
    await feed.poll();
    expect(seen.at(-1)).toEqual(expect.objectContaining({ id: next.id }));
  });

  it('a listener that fails does not keep the others from hearing the change, and the feed starts over', async () => {
    const { feed, theirs, seen, errors } = await sqliteFeed();
    const failing = feed.subscribe(() => {
      throw new Error('listener failed');
    });
    const after: FeedEvent[] = [];
    feed.subscribe((event) => {
      after.push(event);
    });
    const change = await revokeElsewhere(theirs);
    await feed.poll();
    expect(after.map((e) => e.kind)).toEqual(['session', 'reset']);
    expect(errors).toEqual([expect.objectContaining({ message: 'listener failed' })]);
    failing();
    await feed.poll();
    // Not applied while a listener failed: read again, this time to the end.
    expect(seen.at(-1)).toEqual(expect.objectContaining({ id: change.id }));
    expect(feed.cursor).toBe(change.id);
  });
});

describe.skipIf(!redisUp)('change feed on Redis', () => {
  /** This process's feed on Redis, and what another process does: commit, and announce (or not). */
  async function redisFeed() {
    const { mine, theirs } = await twoConnections();
    const prefix = uniquePrefix();
    const redis = new Redis(REDIS_URL);
    const other = new Redis(REDIS_URL);
    clients.push(redis, other);
    const started = await startFeed(mine, redisSource(redis, prefix));
    const elsewhere = redisSource(other, prefix);
    const announced = async () => {
      const change = await revokeElsewhere(theirs);
      await elsewhere.announce(change.id);
      return change;
    };
    return { ...started, mine, theirs, redis: other, prefix, announced };
  }

  it('applies an announced change on the next request', async () => {
    const { feed, seen, announced } = await redisFeed();
    const change = await announced();
    await nextTurn();
    await feed.sync();
    expect(seen).toEqual([expect.objectContaining({ id: change.id, kind: 'session', ref: change.ref })]);
  });

  it('a change committed but never announced is applied at the next poll', async () => {
    const { feed, theirs, seen } = await redisFeed();
    const change = await revokeElsewhere(theirs);
    await nextTurn();
    await feed.sync();
    expect(seen).toEqual([]);
    await feed.poll();
    expect(seen).toEqual([expect.objectContaining({ id: change.id, kind: 'session', ref: change.ref })]);
  });

  it('after Redis lost its data and the counter came back to the value last seen, the feed starts over', async () => {
    const { feed, seen, redis, prefix, announced, theirs } = await redisFeed();
    await announced();
    await nextTurn();
    await feed.sync();
    const lastSeen = await redis.get(`${prefix}changes:seq`);
    // FLUSHDB (of this prefix only), a revocation nobody heard of, and the counter back where it was.
    await redis.del(`${prefix}changes:seq`, `${prefix}changes:epoch`);
    const revoked = await revokeElsewhere(theirs);
    await redis.set(`${prefix}changes:seq`, lastSeen ?? '');
    await nextTurn();
    await feed.sync();
    expect(seen.slice(1)).toEqual([{ kind: 'reset', ref: '' }, expect.objectContaining({ id: revoked.id, kind: 'session', ref: revoked.ref })]);
  });

  it('an announced id that went back in the same epoch (failover to a lagging replica) starts over', async () => {
    const { feed, seen, redis, prefix, announced } = await redisFeed();
    await announced();
    await nextTurn();
    await feed.sync();
    await redis.decr(`${prefix}changes:seq`);
    await nextTurn();
    await feed.sync();
    expect(seen.map((e) => e.kind)).toEqual(['session', 'reset']);
  });

  it('announcements only raise the announced id, so concurrent ones never move it back', async () => {
    const { redis, prefix } = await redisFeed();
    const source = redisSource(redis, prefix);
    await source.announce(7);
    await source.announce(5);
    expect(await redis.get(`${prefix}changes:seq`)).toBe('7');
  });

  it('a value in Redis that nobody here wrote trusts no cache until an announcement rewrites it', async () => {
    const { feed, seen, errors, redis, prefix, announced } = await redisFeed();
    await redis.set(`${prefix}changes:seq`, 'not a number');
    for (let i = 0; i < 3; i++) {
      await nextTurn();
      await feed.sync();
    }
    expect(resets(seen)).toBe(3);
    expect(errors).toHaveLength(1);
    const change = await announced();
    await nextTurn();
    await feed.sync();
    expect(seen.slice(3)).toEqual([{ kind: 'reset', ref: '' }, expect.objectContaining({ id: change.id })]);
    await nextTurn();
    await feed.sync();
    expect(resets(seen)).toBe(4);
  });

  it('announces what this process committed, and a failed announcement is reported, the change still applied here', async () => {
    const { feed, mine, seen, errors, redis, prefix } = await redisFeed();
    const mineChange = await revokeElsewhere(mine);
    await feed.committed('session', mineChange.ref);
    expect(await redis.get(`${prefix}changes:seq`)).toBe(String(mineChange.id));

    const cut = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    clients.push(cut);
    await new Promise((resolve) => cut.once('ready', resolve));
    const { feed: cutOff, seen: cutSeen, errors: cutErrors } = await startFeed(mine, redisSource(cut, prefix));
    cut.disconnect();
    const unannounced = await revokeElsewhere(mine);
    await cutOff.committed('session', unannounced.ref);
    expect(cutSeen).toEqual([expect.objectContaining({ id: unannounced.id, kind: 'session', ref: unannounced.ref })]);
    expect(cutErrors).toEqual([expect.objectContaining({ message: `change session ${unannounced.ref} was committed but not announced` })]);
    expect(await redis.get(`${prefix}changes:seq`)).toBe(String(mineChange.id));
    // The first feed hears of it at its next poll.
    await feed.poll();
    expect(seen.at(-1)).toEqual(expect.objectContaining({ id: unannounced.id }));
    expect(errors).toEqual([]);
  });
});
