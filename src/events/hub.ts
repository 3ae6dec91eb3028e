import type { ChangeFeed, FeedEvent } from '../changes/feed.js';
import type { DeliveryObserver } from '../changes/observer.js';
import type { Change, ChangeStore } from '../changes/store.js';
import { ProblemError } from '../errors.js';
import { formatEvent, formatReset, HEARTBEAT, opening } from './format.js';
import { EventStream, type Sink } from './stream.js';

export interface EventHubOptions {
  /** How often every stream gets a comment line (at most 15 s, so proxies keep quiet streams open). */
  readonly heartbeatMs: number;
  /** Open streams per service credential on this instance. */
  readonly maxStreamsPerCredential: number;
  /** Bytes a stream may have queued for a client that does not read before it is disconnected. */
  readonly maxQueuedBytes?: number;
}

/**
 * Where a stream starts: from now (null), after an event id, or after an id this service never
 * issued in its form (`unknown`, which gets a reset like an id it no longer holds).
 */
export type Resume = number | 'unknown' | null;

/** Bytes queued for one client before it is cut off: hundreds of events, far more than any burst. */
export const MAX_QUEUED_BYTES = 256 * 1024;
/** Events a resumed stream is sent from the log at most; further behind, it gets a reset instead. */
export const MAX_REPLAY = 500;
/** How long streams ended by a shutdown may take to drain before they are cut. */
const SHUTDOWN_DRAIN_MS = 2000;

/** A change as its streams hear it: its event, or a reset when it has none. */
const chunkOf = (change: Change): string => (change.event ? formatEvent(change.id, change.event, change.committedAt) : formatReset(change.id));

/** A stream that starts by dropping every cache, at the log's newest id. */
const resetAt = (latest: number): [number, string] => [latest, opening(null) + formatReset(latest)];

/**
 * The server-sent event streams of the platform's services (GET /api/events). One reader, the
 * change feed, fans every change out to every stream: opening or holding a stream never reads the
 * database, except once to resume one from a `Last-Event-ID`. While streams are open the feed is
 * watched, so a change made on another instance reaches them as soon as it is announced.
 */
export class EventHub {
  private readonly streams = new Set<EventStream>();
  private readonly perCredential = new Map<string, number>();
  /** The id of the last change the feed brought: a new stream starts after it. */
  private position: number;
  /** Resets come in runs while the feed cannot reach its source: the streams hear one per run. */
  private lastWasReset = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  private closing = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly store: ChangeStore,
    private readonly options: EventHubOptions,
    /** The process's metrics (docs/revocation-metrics.md), when they are on. */
    private readonly observer?: DeliveryObserver,
  ) {
    this.position = feed.cursor;
    this.unsubscribe = feed.subscribe(this.onChange);
  }

  /** How often every open stream gets a comment line, in milliseconds. */
  get heartbeatMs(): number {
    return this.options.heartbeatMs;
  }

  /** How many streams are open, for tests and probes. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream for a service credential: from now on, or after `lastEventId`, replayed from the
   * log when it still holds what followed, and starting with a reset when it does not (or when the
   * id is none of ours).
   * @throws rate_limited past the credential's streams; unavailable while shutting down.
   */
  async open(credentialId: string, sink: Sink, lastEventId: Resume): Promise<EventStream> {
    if (this.closing) throw new ProblemError('unavailable', { detail: 'This instance is shutting down.', headers: { 'retry-after': '1' } });
    const max = this.options.maxStreamsPerCredential;
    if ((this.perCredential.get(credentialId) ?? 0) >= max) {
      throw new ProblemError('rate_limited', { detail: `At most ${max} event streams per service credential are open on each instance.`, headers: { 'retry-after': '10' } });
    }
    const stream = new EventStream(credentialId, sink, this.options.maxQueuedBytes ?? MAX_QUEUED_BYTES, () => this.remove(stream));
    this.add(stream);
    try {
      if (lastEventId === null) stream.live(this.position, opening(this.position));
      else stream.live(...(await this.resume(lastEventId)));
    } catch (error) {
      // Its slot is freed and the response left alone, so the client gets the error's problem body.
      stream.abandon();
      throw error;
    }
    return stream;
  }

  /** Ends every stream and refuses new ones: the instance is shutting down. */
  close(): void {
    this.closing = true;
    const draining = [...this.streams];
    for (const stream of draining) stream.end();
    if (draining.length > 0) setTimeout(() => draining.forEach((s) => s.cut()), SHUTDOWN_DRAIN_MS).unref();
  }

  /** Stops hearing the feed (the process is done with it). */
  stop(): void {
    this.close();
    this.unsubscribe();
  }

  /**
   * The replay after `afterId` (what the stream starts with, and the id it then stands at), read
   * once. A replay that would fill more than half of what may wait for a client is a reset instead:
   * queued at once, it would get the stream cut before its first byte, and again on every retry.
   */
  private async resume(afterId: number | 'unknown'): Promise<[number, string]> {
    if (afterId === 'unknown') return resetAt((await this.store.bounds()).latest);
    const changes = await this.store.listAfter(afterId, MAX_REPLAY + 1);
    // After the list, as the feed does: pruning in between shows up as a gap, not a silent hole.
    const { oldest, latest } = await this.store.bounds();
    const reset = resetAt(latest);
    if (afterId > latest || oldest > afterId + 1 || changes.length > MAX_REPLAY) return reset;
    const budget = (this.options.maxQueuedBytes ?? MAX_QUEUED_BYTES) / 2;
    let text = opening(null);
    let bytes = 0;
    for (const change of changes) {
      if (change.kind === 'service') continue;
      const chunk = chunkOf(change);
      bytes += Buffer.byteLength(chunk);
      if (bytes > budget) return reset;
      text += chunk;
    }
    return [Math.max(afterId, changes.at(-1)?.id ?? 0), text];
  }

  private readonly onChange = (change: FeedEvent): void => {
    if (change.kind === 'reset') {
      if (change.rewoundTo !== undefined) {
        // The log's ids went back: every stream stands past its end and would drop what comes.
        // Each ends; its client's reconnection is a reset at the log's new end.
        this.position = change.rewoundTo;
        for (const stream of this.streams) stream.end();
      } else if (!this.lastWasReset) for (const stream of this.streams) stream.reset(this.position);
      this.lastWasReset = true;
      return;
    }
    this.position = change.id;
    // A revoked service credential's streams end; its reconnection is then refused.
    if (change.kind === 'service') {
      for (const stream of this.streams) if (stream.credentialId === change.ref) stream.end();
      return;
    }
    // A change without an event (recorded by an older version) can only be told as a reset.
    this.lastWasReset = change.event === null;
    if (this.streams.size === 0) return;
    const chunk = chunkOf(change);
    for (const stream of this.streams) stream.deliver(change.id, chunk);
    if (change.event) this.observer?.delivered(change);
  };

  private add(stream: EventStream): void {
    this.streams.add(stream);
    this.perCredential.set(stream.credentialId, (this.perCredential.get(stream.credentialId) ?? 0) + 1);
    if (this.streams.size > 1) return;
    this.unwatch = this.feed.watch();
    this.heartbeat = setInterval(() => {
      for (const s of this.streams) s.write(HEARTBEAT);
    }, this.options.heartbeatMs);
    this.heartbeat.unref();
  }

  private remove(stream: EventStream): void {
    if (!this.streams.delete(stream)) return;
    const left = (this.perCredential.get(stream.credentialId) ?? 1) - 1;
    if (left > 0) this.perCredential.set(stream.credentialId, left);
    else this.perCredential.delete(stream.credentialId);
    if (this.streams.size > 0) return;
    clearInterval(this.heartbeat);
    this.unwatch?.();
    this.unwatch = undefined;
  }
}
