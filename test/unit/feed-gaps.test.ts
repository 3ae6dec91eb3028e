import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/account/session-store.js';
import { UserStore } from '../../src/account/user-store.js';
import { ChangeFeed } from '../../src/changes/feed.js';
import { type ChangeSource, redisSource, sqliteSource } from '../../src/changes/sources.js';
import { ChangeStore } from '../../src/changes/store.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PropagationMetrics } from '../../src/observability/metrics/propagation.js';
import { tempDir } from '../helpers/app.js';
import { sampleCount, valueOf } from '../helpers/metrics.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

/** rz_change_feed_gaps_total counts each place the feed starts every cache over, once per occurrence. */
const redisUp = await redisAvailable();
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const cleanUps: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const clean of cleanUps.splice(0).reverse()) await clean();
});

async function database(path: string): Promise<Database> {
  const db = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
  cleanUps.push(() => db.close());
  return db;
}

/** This process's feed with its metrics, and another connection that makes changes. */
async function observedFeed(source: (mine: Database) => ChangeSource) {
  const dir = tempDir();
  cleanUps.push(dir.remove);
  const path = join(dir.dir, 'rz.db');
  const mine = await database(path);
  const theirs = await database(path);
  await migrateToLatest(mine.db);
  const registry = new Registry();
  const feed = new ChangeFeed(new ChangeStore(mine.db), source(mine), () => {}, new PropagationMetrics(registry));
  await feed.start();
  const gaps = async () => {
    const counts: Record<string, number> = {};
    for (const reason of ['lost_publish', 'redis_reset', 'resync']) counts[reason] = await valueOf(registry, 'rz_change_feed_gaps_total', { reason });
    return counts;
  };
  return { feed, mine, theirs, registry, gaps };
}

/** Signs up a user and revokes a session of theirs through `db`, as another process would. */
async function revokeSession(db: Database): Promise<void> {
  const user = { id: randomUUID(), email: `${randomUUID()}@example.com`, username: `u${randomUUID().slice(0, 8)}`, passwordHash: 'x', createdAt: '2026-11-21T00:00:00.000Z' };
  await new UserStore(db.db).insert(user);
  const id = randomUUID();
  const sessions = new SessionStore(db.db);
  await sessions.insert({ id, userId: user.id, createdAt: user.createdAt, expiresAt: '2026-11-22T00:00:00.000Z' });
  await sessions.revoke(id, '2026-11-21T00:00:01.000Z');
}

const onSqlite = (mine: Database) => sqliteSource(mine.dataVersion ?? (() => 0));

describe('the change feed on SQLite', () => {
  it('a revocation read from the log is one propagation sample, however many times the log is read', async () => {
    const { feed, theirs, registry, gaps } = await observedFeed(onSqlite);
    await revokeSession(theirs);
    await feed.poll();
    await feed.poll();
    expect(await sampleCount(registry, 'rz_revocation_propagation_seconds')).toBe(1);
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 0, resync: 0 });
  });

  it('a cursor pruned past is one resync, and so is a log whose ids went back', async () => {
    const { feed, theirs, gaps } = await observedFeed(onSqlite);
    await revokeSession(theirs);
    await revokeSession(theirs);
    await new ChangeStore(theirs.db).prune('9999-01-01T00:00:00.000Z');
    await feed.poll();
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 0, resync: 1 });
    await theirs.db.deleteFrom('changes').execute();
    await feed.poll();
    await feed.poll();
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 0, resync: 2 });
  });

  it('a listener that fails is one resync per run of failures, and the change is sampled once, when applied', async () => {
    const { feed, theirs, registry, gaps } = await observedFeed(onSqlite);
    const failing = feed.subscribe(() => {
      throw new Error('listener failed');
    });
    await revokeSession(theirs);
    await feed.poll();
    await feed.poll();
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 0, resync: 1 });
    expect(await sampleCount(registry, 'rz_revocation_propagation_seconds')).toBe(0);
    failing();
    await feed.poll();
    expect(await sampleCount(registry, 'rz_revocation_propagation_seconds')).toBe(1);
  });
});

describe.skipIf(!redisUp)('the change feed on Redis', () => {
  const client = (options = {}) => {
    const redis = new Redis(REDIS_URL, options);
    cleanUps.push(() => redis.disconnect());
    return redis;
  };

  it('Redis losing its data is one redis_reset; Redis unreachable is one per outage, however many requests', async () => {
    const prefix = uniquePrefix();
    const redis = client();
    const { feed, gaps } = await observedFeed(() => redisSource(redis, prefix));
    await redis.del(`${prefix}changes:seq`, `${prefix}changes:epoch`);
    await nextTurn();
    await feed.sync();
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 1, resync: 0 });
    await redis.set(`${prefix}changes:seq`, 'not a number');
    for (let i = 0; i < 3; i++) {
      await nextTurn();
      await feed.sync();
    }
    expect(await gaps()).toEqual({ lost_publish: 0, redis_reset: 2, resync: 0 });
  });

  it('a change committed here but not announced is one lost_publish', async () => {
    const cut = client({ enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    await new Promise((resolve) => cut.once('ready', resolve));
    const { feed, mine, registry, gaps } = await observedFeed(() => redisSource(cut, uniquePrefix()));
    cut.disconnect();
    await revokeSession(mine);
    await feed.committed('session', 'x');
    expect(await gaps()).toEqual({ lost_publish: 1, redis_reset: 0, resync: 0 });
    // Applied here all the same.
    expect(await sampleCount(registry, 'rz_revocation_propagation_seconds')).toBe(1);
  });
});
