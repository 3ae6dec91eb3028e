import { type FeedObserver, SOURCE_LOST } from './observer.js';
import type { ChangeSource, Position } from './sources.js';
import { watchSource } from './watch.js';
import type { Change, ChangeKind, ChangeStore } from './store.js';

/**
 * A change to apply, with its id in the log, or `reset`: the feed lost track, so every cache must
 * start over. `rewoundTo` says the log's ids went back (the database was replaced) and where they end.
 */
export type FeedEvent = Change | { readonly kind: 'reset'; readonly ref: ''; readonly rewoundTo?: number };
export type ChangeListener = (event: FeedEvent) => void | Promise<void>;

const RESET: FeedEvent = { kind: 'reset', ref: '' };
/** Changes read per query when catching up. */
const PAGE = 500;

/**
 * Keeps this process's caches consistent with changes made anywhere (revocations, logouts,
 * deletions, key rotations). The database's `changes` table is the one log: every change is
 * recorded there in the transaction that makes it, and this feed applies the entries after the
 * last one it applied (its cursor), in id order, each once.
 *
 * Before every request, {@link sync} asks the source whether the log moved (SQLite: `data_version`;
 * PostgreSQL: newest change id; Redis: an announced id and an epoch) and, if so, reads the log
 * before the request goes on. A change whose announcement was lost (Redis unreachable from the
 * process that made it, a process killed between commit and announcement, the CLI run without
 * Redis) is still in the log: {@link poll}, run periodically, applies it within one poll interval.
 * When the source cannot be reached, caches are dropped on every request until it answers: stale
 * answers are never served.
 */
export class ChangeFeed {
  /** The source's position last seen; undefined while it cannot be reached. */
  private position: Position | undefined;
  /** The id of the last change applied: reads of the log start after it. */
  private applied = 0;
  /** Reads of the log run one after another, so no change is skipped or applied twice. */
  private queue: Promise<void> = Promise.resolve();
  /** The newest read a moved position asked for; requests that arrive while it runs wait for it too. */
  private tail: Promise<void> | undefined;
  private failing = false;
  private readonly listeners: ChangeListener[] = [];
  private watchers = 0;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: ChangeStore,
    private readonly source: ChangeSource,
    private readonly onError: (error: unknown) => void = () => {},
    /** The process's metrics (docs/revocation-metrics.md), when they are on. */
    private readonly observer?: FeedObserver,
  ) {}

  /**
   * Starts from the current end of the log: nothing older can be in a cache yet. An unreachable
   * source is not fatal: requests then run without caches until it answers. Returns whether it answered.
   */
  async start(): Promise<boolean> {
    try {
      this.position = await this.source.position();
    } catch (error) {
      this.onError(error);
    }
    // After the position: a change announced in between is read again, never missed.
    this.applied = await this.store.latestId();
    return this.position !== undefined;
  }

  /** The id of the last change applied. */
  get cursor(): number {
    return this.applied;
  }

  /** Hears every change from now on, in log order, and every reset. Returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index >= 0) this.listeners.splice(index, 1);
    };
  }

  /**
   * Applies a change this process committed (through the same read of the log as everyone
   * else's), then announces it to the other processes, before the request that made it returns.
   */
  async committed(kind: ChangeKind, ref: string): Promise<void> {
    await this.poll();
    try {
      await this.source.announce(this.applied);
    } catch (error) {
      // Committed, and in the log: the other processes apply it at their next poll instead.
      this.onError(new Error(`change ${kind} ${ref} was committed but not announced`, { cause: error }));
      this.observer?.gap('lost_publish');
    }
  }

  /**
   * Until the returned function is called, applies changes other processes announce as soon as they
   * do, not at this process's next request or poll (see {@link watchSource}): the event streams
   * need that, an idle instance does not.
   */
  watch(): () => void {
    if (this.watchers++ === 0) this.unwatch = watchSource(this, this.source, this.onError);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.watchers === 0) {
        this.unwatch?.();
        this.unwatch = undefined;
      }
    };
  }

  /** Applies whatever the log holds after the cursor, announced or not. */
  poll(): Promise<void> {
    return this.enqueue(() => this.read(false));
  }

  /**
   * Catches up with other processes. Returns undefined (nothing to await) when nothing changed.
   *
   * One check serves every request that arrived in the same turn of the event loop: each of them
   * arrived before the check was made, so a change committed before any of them was sent is
   * visible to it. Under load this turns one check per request into one per batch of requests.
   */
  sync(): Promise<void> | undefined {
    if (this.checked) return this.checked === true ? this.tail : this.checked;
    const result = this.check();
    this.checked = result ?? true;
    setImmediate(this.resetChecked);
    return result;
  }

  private checked: Promise<void> | true | undefined;
  private readonly resetChecked = () => {
    this.checked = undefined;
  };

  private check(): Promise<void> | undefined {
    let position: Position | Promise<Position>;
    try {
      position = this.source.position();
    } catch (error) {
      return this.lost(error);
    }
    if (!(position instanceof Promise)) return this.seen(position);
    return position.then(
      (p) => this.seen(p),
      (error: unknown) => this.lost(error),
    );
  }

  private seen(position: Position): Promise<void> | undefined {
    const last = this.position;
    if (last !== undefined && position.seq === last.seq && position.epoch === last.epoch) return this.tail;
    this.position = position;
    // Only a step forward in the same epoch is the log moving. Anything else (a new epoch, a seq
    // that went back, the first answer after an outage) means the source lost or replaced its
    // state, and with it perhaps announcements: start every cache over, then read the log.
    const moved = last !== undefined && position.epoch === last.epoch && position.seq > last.seq;
    if (last !== undefined && !moved) this.observer?.gap(SOURCE_LOST[this.source.name]);
    const tail = this.enqueue(() => this.read(!moved));
    this.tail = tail;
    void tail.then(() => {
      if (this.tail === tail) this.tail = undefined;
    });
    return tail;
  }

  private lost(error: unknown): Promise<void> {
    if (this.position !== undefined) {
      this.onError(error);
      this.observer?.gap(SOURCE_LOST[this.source.name]);
    }
    this.position = undefined;
    // A listener that fails here (the database is down too) has still dropped what it could.
    return this.emit(RESET).catch(() => {});
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work).then(
      () => {
        this.failing = false;
      },
      (error: unknown) => this.failed(error),
    );
    this.queue = run;
    return run;
  }

  /** A read failed: trust nothing cached, and read again at the next request (reported once per outage). */
  private async failed(error: unknown): Promise<void> {
    if (!this.failing) {
      this.onError(error);
      this.observer?.gap('resync');
    }
    this.failing = true;
    this.position = undefined;
    await this.emit(RESET).catch(() => {});
  }

  private async read(reset: boolean): Promise<void> {
    if (reset) await this.emit(RESET);
    let changes = await this.store.listAfter(this.applied, PAGE);
    // Read after the list, so pruning in between shows up here rather than as a silent hole.
    const { oldest, latest } = await this.store.bounds();
    // Pruned past the cursor (this process was away longer than the retention window), or a log
    // whose ids end below it (the database was replaced): what was missed is unknown. Ids skipped by
    // rolled-back transactions can make this a needless reset, never a missed change.
    const rewound = latest < this.applied;
    const pruned = !rewound && oldest > this.applied + 1 && !reset;
    if (rewound || pruned) this.observer?.gap('resync');
    if (rewound) {
      await this.emit({ kind: 'reset', ref: '', rewoundTo: latest });
      this.applied = latest;
    } else if (pruned) await this.emit(RESET);
    for (;;) {
      for (const change of changes) {
        await this.emit(change);
        this.applied = change.id;
        this.observer?.applied(change);
      }
      if (changes.length < PAGE) return;
      // A long catch-up lets I/O run between pages (on SQLite nothing else would): event streams
      // drain their sockets instead of queueing every page for their clients at once.
      await new Promise(setImmediate);
      changes = await this.store.listAfter(this.applied, PAGE);
    }
  }

  /** Every listener hears every event, even when one of them fails; the first failure is then thrown. */
  private async emit(event: FeedEvent): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
