import type { ChangeRecord, ChangeSource } from './sources.js';
import type { ChangeKind } from './store.js';

/** A change to apply, or `reset`: the feed lost track, so every cache must start over. */
export type FeedEvent = ChangeRecord | { readonly kind: 'reset'; readonly ref: '' };
export type ChangeListener = (event: FeedEvent) => void | Promise<void>;

const RESET: FeedEvent = { kind: 'reset', ref: '' };

/**
 * Keeps this process's caches consistent with changes made anywhere (revocations, logouts,
 * deletions, key rotations).
 *
 * Before every request, {@link sync} asks the source whether the change log moved (SQLite:
 * `data_version`; PostgreSQL: newest change id; Redis: a counter) and, if so, applies the new
 * entries before the request goes on. A process applies its own changes at once with
 * {@link committed}, which also publishes them. When the source cannot be reached, caches are
 * dropped on every request until it can: stale answers are never served.
 */
export class ChangeFeed {
  private version: string | undefined;
  private cursor = '0';
  /** The newest pending catch-up; requests that arrive while it runs wait for it too. */
  private tail: Promise<void> | undefined;
  private readonly listeners: ChangeListener[] = [];

  constructor(
    private readonly source: ChangeSource,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Starts from the current end of the log: nothing older can be in a cache yet. An unreachable
   * source is not fatal: requests then run without caches until it answers.
   */
  async start(): Promise<void> {
    try {
      const { version, cursor } = await this.source.start();
      this.version = version;
      this.cursor = cursor;
    } catch (error) {
      this.onError(error);
      this.version = undefined;
    }
  }

  subscribe(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Applies a change this process committed, then publishes it to the other processes, before the
   * request that made it returns.
   */
  async committed(kind: ChangeKind, ref: string): Promise<void> {
    await this.emit({ kind, ref });
    try {
      await this.source.publish({ kind, ref });
    } catch (error) {
      // Committed, but other instances may not hear of it: say so loudly (see README, deployment).
      this.onError(error);
    }
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
    let version: string | Promise<string>;
    try {
      version = this.source.version();
    } catch (error) {
      return this.lost(error);
    }
    if (typeof version === 'string') return this.seen(version);
    return version.then(
      (v) => this.seen(v),
      (error: unknown) => this.lost(error),
    );
  }

  private seen(version: string): Promise<void> | undefined {
    if (version === this.version) return this.tail;
    // After an outage the missed entries do not matter (caches were dropped on every request while
    // the source was away): start over from the current end instead of replaying the log.
    const recovering = this.version === undefined;
    this.version = version;
    this.enqueue(recovering ? () => this.restart() : () => this.readChanges());
    return this.tail;
  }

  private lost(error: unknown): Promise<void> {
    if (this.version !== undefined) this.onError(error);
    this.version = undefined;
    return this.emit(RESET);
  }

  /** Queues work after any catch-up already running, so no entry is ever skipped. */
  private enqueue(work: () => Promise<void>): void {
    const next = (this.tail ?? Promise.resolve()).catch(() => undefined).then(work);
    this.tail = next;
    next.then(
      () => {
        if (this.tail === next) this.tail = undefined;
      },
      () => {
        // The read failed: forget the version so the next request tries again.
        this.version = undefined;
        if (this.tail === next) this.tail = undefined;
      },
    );
  }

  private async restart(): Promise<void> {
    const { cursor } = await this.source.start();
    this.cursor = cursor;
    await this.emit(RESET);
  }

  private async readChanges(): Promise<void> {
    const batch = await this.source.read(this.cursor);
    if (!batch.complete) await this.emit(RESET);
    for (const change of batch.changes) await this.emit(change);
    this.cursor = batch.cursor;
  }

  private async emit(event: FeedEvent): Promise<void> {
    for (const listener of this.listeners) await listener(event);
  }
}
