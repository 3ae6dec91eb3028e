import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Fetch } from './introspect.js';

export interface EventFeedOptions {
  readonly base: string;
  readonly serviceToken: string;
  readonly fetch: Fetch;
  /** No byte for this long (rz-auth sends a comment at least every 15 s) means the connection is dead. */
  readonly idleTimeoutMs: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** A message of the stream (an event, `reset` included). */
  readonly onEvent: (message: EventSourceMessage) => void;
  /** The stream came up (true) or went down (false). */
  readonly onState: (up: boolean) => void;
  readonly onError: (error: unknown) => void;
}

/** Largest event we accept: rz-auth's are a few hundred bytes; a bigger one means a broken stream. */
const MAX_EVENT_CHARS = 64 * 1024;

/**
 * GET /api/events, kept open: reconnects with exponential backoff (and jitter, so a fleet of
 * services does not come back in step), resumes with `Last-Event-ID` after the last event it had.
 * It counts as up from the first bytes of the body: rz-auth writes them once the stream is
 * subscribed to its change feed, so nothing committed after that moment is missed.
 */
export class EventFeed {
  private closed = false;
  private up = false;
  private lastEventId: string | undefined;
  private controller: AbortController | undefined;
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;

  constructor(private readonly options: EventFeedOptions) {
    this.done = this.run();
  }

  get connected(): boolean {
    return this.up;
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
      const wasUp = await this.connectOnce().catch((error: unknown) => {
        if (!this.closed) this.options.onError(error);
        return this.up;
      });
      this.setUp(false);
      if (this.closed) return;
      failures = wasUp ? 0 : failures + 1;
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

  /** One connection, read to its end; resolves whether it ever came up. */
  private async connectOnce(): Promise<boolean> {
    const controller = new AbortController();
    this.controller = controller;
    const { base, serviceToken, idleTimeoutMs } = this.options;
    let idle = setTimeout(() => controller.abort(), idleTimeoutMs);
    try {
      const res = await this.options.fetch(`${base}/api/events`, {
        headers: {
          authorization: `Bearer ${serviceToken}`,
          accept: 'text/event-stream',
          ...(this.lastEventId === undefined ? {} : { 'last-event-id': this.lastEventId }),
        },
        signal: controller.signal,
      });
      if (res.status !== 200 || res.body === null) {
        await res.body?.cancel();
        throw new Error(`GET /api/events answered ${res.status}`);
      }
      const parser = createParser({
        maxBufferSize: MAX_EVENT_CHARS,
        onEvent: (message) => {
          if (message.id !== undefined) this.lastEventId = message.id;
          this.options.onEvent(message);
        },
        // A message past the bound means a broken stream; other parse errors (an unknown field) are harmless.
        onError: (error) => {
          if (error.type === 'max-buffer-size-exceeded') controller.abort();
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(), idleTimeoutMs);
        this.setUp(true);
        parser.feed(decoder.decode(chunk, { stream: true }));
      }
      return this.up;
    } finally {
      clearTimeout(idle);
    }
  }

  private setUp(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    this.options.onState(up);
  }
}
