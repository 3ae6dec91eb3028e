import type { Redis } from 'ioredis';
import type { Change, ChangeKind, ChangeStore } from './store.js';

export type ChangeRecord = Pick<Change, 'kind' | 'ref'>;

/** A batch read from a source; `complete` is false when older entries were lost (trimmed). */
export interface ChangeBatch {
  readonly changes: readonly ChangeRecord[];
  readonly cursor: string;
  readonly complete: boolean;
}

/**
 * Where a process learns about changes other processes made. `version()` is asked before every
 * request and must be cheap; it changes whenever a change is recorded anywhere.
 */
export interface ChangeSource {
  /** The current end of the log: position, version and cursor to read from next. */
  start(): Promise<{ version: string; cursor: string }>;
  /** Throws (or rejects) when the source cannot be reached. */
  version(): string | Promise<string>;
  read(cursor: string): Promise<ChangeBatch>;
  /** Tells the other processes about a change this process has committed. */
  publish(change: ChangeRecord): Promise<void>;
}

/** Reads the `changes` table after a cursor (the last id seen). */
async function readTable(store: ChangeStore, cursor: string): Promise<ChangeBatch> {
  const changes = await store.listAfter(Number(cursor));
  return { changes, cursor: String(changes.at(-1)?.id ?? cursor), complete: true };
}

/**
 * SQLite: `PRAGMA data_version` moves whenever another connection (a worker, the CLI) commits to
 * the file; reading it costs no I/O. The change itself is in the `changes` table, so publishing is
 * the commit.
 */
export function sqliteSource(store: ChangeStore, dataVersion: () => number): ChangeSource {
  return {
    start: async () => ({ version: String(dataVersion()), cursor: String(await store.latestId()) }),
    version: () => String(dataVersion()),
    read: (cursor) => readTable(store, cursor),
    publish: async () => {},
  };
}

/**
 * PostgreSQL without Redis: the newest change id, one indexed query per request. Correct for a
 * single instance plus the CLI; several instances should share Redis instead, which is cheaper.
 */
export function postgresSource(store: ChangeStore): ChangeSource {
  return {
    start: async () => {
      const latest = String(await store.latestId());
      return { version: latest, cursor: latest };
    },
    version: async () => String(await store.latestId()),
    read: (cursor) => readTable(store, cursor),
    publish: async () => {},
  };
}

const STREAM_LENGTH = 100_000;

/**
 * Redis: a counter (`<prefix>changes:seq`, one GET per request) and a stream of the changes
 * themselves, both written in one MULTI after the database commit, so whoever sees the new counter
 * finds the entry too. Every instance sharing the Redis sees a revocation from its next request on.
 */
export function redisSource(redis: Redis, prefix: string): ChangeSource {
  const seqKey = `${prefix}changes:seq`;
  const streamKey = `${prefix}changes`;
  let lastSeq = 0;
  return {
    async start() {
      const [seq, last] = await Promise.all([redis.get(seqKey), redis.xrevrange(streamKey, '+', '-', 'COUNT', 1)]);
      lastSeq = Number(seq ?? 0);
      return { version: seq ?? '0', cursor: last[0]?.[0] ?? '0-0' };
    },
    version: async () => (await redis.get(seqKey)) ?? '0',
    async read(cursor) {
      // One MULTI: the entries and the counter from the same instant.
      const replies = (await redis.multi().xrange(streamKey, `(${cursor}`, '+').get(seqKey).exec()) ?? [];
      const entries = (replies[0]?.[1] ?? []) as Array<[string, string[]]>;
      const seq = (replies[1]?.[1] ?? null) as string | null;
      const changes = entries.map(([, fields]) => ({ kind: fields[1] as ChangeKind, ref: fields[3] ?? '' }));
      const now = Number(seq ?? 0);
      // Fewer entries than the counter moved: the stream was trimmed past our cursor (or reset).
      const complete = now - lastSeq <= changes.length && now >= lastSeq;
      lastSeq = now;
      return { changes, cursor: entries.at(-1)?.[0] ?? cursor, complete };
    },
    async publish(change) {
      await redis
        .multi()
        .xadd(streamKey, 'MAXLEN', '~', STREAM_LENGTH, '*', 'kind', change.kind, 'ref', change.ref)
        .incr(seqKey)
        .exec();
    },
  };
}
