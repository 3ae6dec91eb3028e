import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeFeed, type FeedEvent } from '../../src/changes/feed.js';
import { sqliteSource } from '../../src/changes/sources.js';
import { ChangeStore } from '../../src/changes/store.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { SessionStore } from '../../src/sessions/store.js';
import { UserStore } from '../../src/users/store.js';
import { tempDir } from '../helpers/app.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('change feed', () => {
  const open: Database[] = [];
  const dirs: Array<() => void> = [];
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
    for (const remove of dirs.splice(0)) remove();
  });

  async function twoConnections() {
    const dir = tempDir();
    dirs.push(dir.remove);
    const path = join(dir.dir, 'rz.db');
    const mine = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
    const theirs = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
    open.push(mine, theirs);
    await migrateToLatest(mine.db);
    let checks = 0;
    const dataVersion = mine.dataVersion ?? (() => 0);
    const feed = new ChangeFeed(sqliteSource(new ChangeStore(mine.db), () => (checks++, dataVersion())));
    const seen: FeedEvent[] = [];
    feed.subscribe((event) => {
      seen.push(event);
    });
    await feed.start();
    return { feed, theirs, seen, checks: () => checks };
  }

  async function revokeElsewhere(theirs: Database): Promise<string> {
    const users = new UserStore(theirs.db);
    const sessions = new SessionStore(theirs.db);
    const user = { id: randomUUID(), email: `${randomUUID()}@example.com`, username: `u${randomUUID().slice(0, 8)}`, passwordHash: 'x', createdAt: '2026-11-21T00:00:00.000Z' };
    await users.insert(user);
    const id = randomUUID();
    await sessions.insert({ id, userId: user.id, createdAt: user.createdAt, expiresAt: '2026-11-22T00:00:00.000Z' });
    await sessions.revoke(id, '2026-11-21T00:00:01.000Z');
    return id;
  }

  it('checks the source once per turn of the event loop, however many requests arrive in it', async () => {
    const { feed, checks } = await twoConnections();
    const before = checks();
    for (let i = 0; i < 50; i++) void feed.sync();
    expect(checks() - before).toBe(1);
    await nextTurn();
    void feed.sync();
    expect(checks() - before).toBe(2);
  });

  it("applies another connection's change from the next turn on", async () => {
    const { feed, theirs, seen } = await twoConnections();
    const id = await revokeElsewhere(theirs);
    await nextTurn();
    await feed.sync();
    expect(seen).toContainEqual(expect.objectContaining({ kind: 'session', ref: id }));
  });

  it('every request of the turn that found a change waits for it to be applied', async () => {
    const { feed, theirs, seen } = await twoConnections();
    const id = await revokeElsewhere(theirs);
    await nextTurn();
    const first = feed.sync();
    const second = feed.sync();
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBe(first);
    await second;
    expect(seen).toContainEqual(expect.objectContaining({ kind: 'session', ref: id }));
  });
});
