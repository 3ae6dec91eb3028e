import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { chunksOf, discard, type Fetch, fetchUntil } from './bounded.js';
import { CredentialRefused, refusesCredential } from './errors.js';

export interface EventFeedOptions {
  readonly base: string;
  readonly serviceToken: string;
  readonly fetch: Fetch;
  /**
   * No byte for this long means the connection is dead. rz-auth sends a comment at least every
   * 15 s and states its interval in a header; the lease it gives is used when shorter.
   */
  readonly idleTimeoutMs: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * A message of the stream (an event, `reset` included), with its commit time at rz-auth in
   * milliseconds since the epoch when it came with one.
   */
  readonly onEvent: (message: EventSourceMessage, committedAt: number | undefined) => void;
  /** The stream came up (true) or went down (false). */
  readonly onState: (up: boolean) => void;
  readonly onError: (error: unknown) => void;
}

/** Largest event we accept: rz-auth's are a few hundred bytes; a bigger one means a broken stream. */
const MAX_EVENT_CHARS = 64 * 1024;
/**
 * rz-auth's event ids are whole numbers of at most 15 digits (what its Last-Event-ID accepts). Any
 * other id is never kept: sent back it could not be a header (non-ASCII, control characters), or
 * would be too large (431) or refused (400), on every reconnect.
 */
const EVENT_ID = /^[0-9]{1,15}$/;
/**
 * How long a connection must stay up before the backoff starts over: one that comes up and drops
 * at once counts as a failure, so a flapping upstream is retried ever more slowly.
 */
const PROVEN_MS = 5000;
/** rz-auth's statement of its heartbeat interval, in milliseconds, on the stream's response. */
const HEARTBEAT_HEADER = 'rz-heartbeat-ms';
/** The field of an event that says when rz-auth committed it (docs/platform-services.md), and its form. */
const COMMITTED_AT = 'committed_at';
const EPOCH_MS = /^[0-9]{1,15}$/;

/**
 * How long a stream may stay silent and still be trusted, given the heartbeat interval `header`
 * states: one interval and a half, at least one interval plus a second (timers and the network
 * run late), never longer than `idleTimeoutMs`. Without a readable statement, `idleTimeoutMs`.
 */
export function leaseOf(header: string | null, idleTimeoutMs: number): number {
  if (header === null || !/^[0-9]{1,7}$/.test(header) || Number(header) === 0) return idleTimeoutMs;
  const interval = Number(header);
  return Math.min(idleTimeoutMs, interval + Math.max(1000, interval / 2));
}

/**
 * GET /api/events, kept open: reconnects with exponential backoff (and jitter, so a fleet of
 * services does not come back in step), resumes with `Last-Event-ID` after the last event it had.
 * It counts as up from the first bytes of the body: rz-auth writes them once the stream is
 * subscribed to its change feed, so nothing committed after that moment is missed. The backoff
 * starts over only after a connection stayed up {@link PROVEN_MS}.
 */
export class EventFeed {
  private closed = false;
  private up = false;
  /** When the stream last came up, and when its last byte came (performance.now()). */
  private upSince = 0;
  private lastByteAt = 0;
  /** How long after its last byte the stream is still trusted ({@link leaseOf}). */
  private leaseMs: number;
  private lastEventId: string | undefined;
  private controller: AbortController | undefined;
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(private readonly options: EventFeedOptions) {
    this.leaseMs = options.idleTimeoutMs;
    this.done = this.run();
  }

  /**
   * Up, and heard from within its lease: a stalled connection delivers no event, so trust in what
   * it keeps correct lapses with the lease, even before the idle timer (which may run late on a
   * busy event loop) has ended the connection.
   */
  get connected(): boolean {
    return this.up && performance.now() - this.lastByteAt <= this.leaseMs;
  }

  /** Ends the stream and any wait for the next attempt; resolves once the loop has stopped. */
  async close(): Promise<void> {
    this.closed = true;
    this.controller?.abort();
    this.wake?.();
    await this.done;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      await this.connectOnce().catch((error: unknown) => {
        if (!this.closed) this.options.onError(error);
      });
      const proven = this.up && performance.now() - this.upSince >= PROVEN_MS;
      this.setUp(false);
      if (this.closed) return;
      failures = proven ? 0 : failures + 1;
      await this.pause(this.delay(failures));
    }
  }

  private delay(failures: number): number {
    const { minDelayMs, maxDelayMs } = this.options;
    const ceiling = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(failures, 20));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** One connection, read to its end. */
  private async connectOnce(): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    const { base, serviceToken, idleTimeoutMs } = this.options;
    let idle = setTimeout(() => controller.abort(), idleTimeoutMs);
    try {
      const res = await fetchUntil(this.options.fetch, `${base}/api/events`, {
        headers: {
          authorization: `Bearer ${serviceToken}`,
          accept: 'text/event-stream',
          ...(this.lastEventId === undefined ? {} : { 'last-event-id': this.lastEventId }),
        },
        signal: controller.signal,
        // A stream from another origin could keep revoked tokens cached: a redirect is a failure.
        redirect: 'error',
      });
      const body = this.checked(res);
      this.leaseMs = leaseOf(res.headers.get(HEARTBEAT_HEADER), idleTimeoutMs);
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(), this.leaseMs);
      // The parser hands over a field it does not know as an error, before the event it belongs to.
      let committedAt: number | undefined;
      const parser = createParser({
        maxBufferSize: MAX_EVENT_CHARS,
        onEvent: (message) => {
          if (message.id !== undefined && EVENT_ID.test(message.id)) this.lastEventId = message.id;
          this.options.onEvent(message, committedAt);
          committedAt = undefined;
        },
        // A message past the bound means a broken stream; other parse errors (an unknown field) are harmless.
        onError: (error) => {
          if (error.type === 'max-buffer-size-exceeded') controller.abort();
          else if (error.type === 'unknown-field' && error.field === COMMITTED_AT) committedAt = EPOCH_MS.test(error.value ?? '') ? Number(error.value) : undefined;
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of chunksOf(body, controller.signal)) {
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(), this.leaseMs);
        this.lastByteAt = performance.now();
        this.setUp(true);
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
    } finally {
      clearTimeout(idle);
    }
  }

  /**
   * The body of an answer that is an event stream: a 200 of `text/event-stream`, not reached
   * through a redirect (a custom fetch may follow one). Anything else throws, and is a failure.
   */
  private checked(res: Response): ReadableStream<Uint8Array> {
    const type = res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (res.status === 200 && !res.redirected && type === 'text/event-stream' && res.body !== null) {
      return res.body;
    }
    discard(res);
    if (refusesCredential(res.status) && !res.redirected) throw new CredentialRefused('GET /api/events', res.status);
    if (res.status === 400 && this.lastEventId !== undefined) {
      // rz-auth refuses an id it cannot read: start over without one, as after a reset (the caches
      // were dropped when the stream went down, and nothing is cached until it is up again).
      this.lastEventId = undefined;
      throw new Error('GET /api/events answered 400 to Last-Event-ID: reconnecting without it');
    }
    throw new Error(`GET /api/events answered ${res.status}${res.redirected ? ' after a redirect' : ''} (${type ?? 'no content type'})`);
  }

  private setUp(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    if (up) this.upSince = performance.now();
    this.options.onState(up);
  }
}
