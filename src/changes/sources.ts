import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { reportOutages } from '../ratelimit/redis.js';
import type { ChangeStore } from './store.js';

/**
 * Where the change log stands, as a source sees it. Within one `epoch`, `seq` only grows; a new
 * epoch or a smaller `seq` means the source lost or replaced its state.
 */
export interface Position {
  readonly epoch: string;
  readonly seq: number;
}

/**
 * How a process learns, cheaply, that the change log moved. The log itself is always the
 * database's `changes` table; a source only says when to read it again.
 */
export interface ChangeSource {
  /** Redis, or the database itself (SQLite, PostgreSQL): what a lost position is counted as (observer.ts). */
  readonly name: 'redis' | 'database';
  /**
   * Asked once per turn of the event loop that has requests in it, so one cheap read.
   * Throws (or rejects) when the source cannot be reached.
   */
  position(): Position | Promise<Position>;
  /** Tells the other processes that the log reached change `id`. Rejects when it cannot. */
  announce(id: number): Promise<void>;
  /**
   * Calls `onAnnounce` as soon as another process announces a change, until the returned function
   * is called; absent when the source cannot push (the feed then asks it on a short interval).
   * Only a wake-up: what changed is always read from the log.
   */
  listen?(onAnnounce: () => void, onError: (error: unknown) => void): () => void;
}

/**
 * SQLite: `PRAGMA data_version` moves whenever another connection (a worker, the CLI) commits to
 * the file, and reading it costs no I/O; the commit itself is the announcement.
 */
export function sqliteSource(dataVersion: () => number): ChangeSource {
  return { name: 'database', position: () => ({ epoch: '', seq: dataVersion() }), announce: async () => {} };
}

/**
 * PostgreSQL without Redis: the newest change id, one indexed query per request; the commit itself
 * is the announcement. Several instances should share Redis instead, which is cheaper.
 */
export function postgresSource(store: ChangeStore): ChangeSource {
  return { name: 'database', position: async () => ({ epoch: '', seq: await store.latestId() }), announce: async () => {} };
}

/**
 * Creates the epoch if it is missing, raises the seq to the announced id (never lowers it), and
 * publishes the id to the processes listening.
 */
const ANNOUNCE = `
redis.call('SET', KEYS[1], ARGV[2], 'NX')
local seq = tonumber(redis.call('GET', KEYS[2]))
if seq == nil or seq < tonumber(ARGV[1]) then redis.call('SET', KEYS[2], ARGV[1]) end
redis.call('PUBLISH', KEYS[3], ARGV[1])
`;

const SEQ = /^\d{1,15}$/;

/**
 * Redis: `<prefix>changes:seq` is the newest change id announced and `<prefix>changes:epoch` a
 * random value created beside it (`SET NX`) whenever it is missing; both are read in one MGET.
 *
 * The seq is a change id and announcements only raise it, so while the database hands out new ids
 * it never comes back to a value a process has seen, even after a failover to a replica that missed
 * the latest writes. Losing Redis's data (FLUSHDB, a restart without persistence) loses the epoch
 * too: the next reader or announcer creates a new one, and every process sees a new epoch.
 */
export function redisSource(redis: Redis, prefix: string): ChangeSource {
  const epochKey = `${prefix}changes:epoch`;
  const seqKey = `${prefix}changes:seq`;
  const channel = `${prefix}changes`;
  return {
    name: 'redis',
    async position() {
      let [epoch, seq] = await redis.mget(epochKey, seqKey);
      if (epoch === null) {
        await redis.set(epochKey, randomUUID(), 'NX');
        [epoch, seq] = await redis.mget(epochKey, seqKey);
      }
      // A value nobody here wrote: fail closed (the feed then trusts no cache) until it is rewritten.
      if (!epoch || (seq != null && !SEQ.test(seq))) throw new Error(`unexpected change feed state in Redis at ${seqKey}`);
      return { epoch, seq: Number(seq ?? 0) };
    },
    async announce(id) {
      await redis.eval(ANNOUNCE, 3, epochKey, seqKey, channel, String(id), randomUUID());
    },
    listen(onAnnounce, onError) {
      // A connection of its own: one that subscribes can send no other command. Its subscription is
      // queued until it connects and renewed after each reconnect, when announcements may have been
      // missed, so each 'ready' is a wake-up too.
      const subscriber = redis.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
      reportOutages(subscriber, onError);
      subscriber.on('ready', onAnnounce);
      subscriber.on('message', onAnnounce);
      subscriber.subscribe(channel).catch(onError);
      return () => subscriber.disconnect();
    },
  };
}

/**
 * Redis when configured (shared by every instance); otherwise what the database itself offers:
 * SQLite's data version (`dataVersion`), or PostgreSQL's change log position.
 */
export function changeSource(dataVersion: (() => number) | null, store: ChangeStore, redis: Redis | null, redisPrefix: string): ChangeSource {
  if (redis) return redisSource(redis, redisPrefix);
  return dataVersion ? sqliteSource(dataVersion) : postgresSource(store);
}
