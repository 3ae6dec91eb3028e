import { Readable } from 'node:stream';
import { formatReset } from './format.js';

/** Where a stream's bytes go: the HTTP response, whose queue is counted and which is cut on overflow. */
export interface Sink {
  readonly writableLength: number;
  destroy(): void;
}

/**
 * One client's event stream. Bytes go into {@link readable}, which the HTTP layer pipes into the
 * response; what the client has not read yet waits in both (the readable's buffer while the pipe is
 * paused, the response's while the socket is full), and past `maxQueuedBytes` in all the client is
 * disconnected: a stream that never reads cannot make the server hold its events for ever.
 */
export class EventStream {
  readonly readable = new Readable({ read() {} });
  /** Events up to this id are not sent (again): the replay or the reset covered them. */
  private lastId = 0;
  /** Live events that arrive while a resumed stream reads its replay; null once it is live. */
  private pending: Array<{ readonly id: number; readonly chunk: string }> | null = [];
  private pendingBytes = 0;
  /** A reset came while the replay was read: the client hears it right after the replay. */
  private pendingReset = false;
  private ended = false;

  constructor(
    readonly credentialId: string,
    private readonly sink: Sink,
    private readonly maxQueuedBytes: number,
    /** Called once the stream is over, however it ended (more than once is harmless). */
    private readonly onClose: () => void,
  ) {
    this.readable.once('close', () => {
      this.ended = true;
      onClose();
    });
  }

  /** Starts sending: `head` first (opening, replay or reset), then live events after `afterId`. */
  live(afterId: number, head: string): void {
    this.lastId = afterId;
    this.write(head);
    if (this.pendingReset) this.write(formatReset(afterId));
    const pending = this.pending ?? [];
    this.pending = null;
    for (const { id, chunk } of pending) this.deliver(id, chunk);
  }

  /** A live event: sent once, in order, unless the replay already sent it. */
  deliver(id: number, chunk: string): void {
    if (this.pending) {
      this.pending.push({ id, chunk });
      this.pendingBytes += chunk.length;
      if (this.pendingBytes > this.maxQueuedBytes) this.cut();
      return;
    }
    if (id <= this.lastId) return;
    this.lastId = id;
    this.write(chunk);
  }

  /** Tells the client to drop every cache, at `position` or at this stream's own last id if later. */
  reset(position: number): void {
    if (this.pending) this.pendingReset = true;
    else this.write(formatReset(Math.max(position, this.lastId)));
  }

  write(chunk: string): void {
    if (this.ended) return;
    this.readable.push(chunk);
    if (this.readable.readableLength + this.sink.writableLength > this.maxQueuedBytes) this.cut();
  }

  /** Ends the stream after what is queued (shutdown, revoked credential): the client reconnects. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.readable.push(null);
    this.onClose();
  }

  /** Gives up a stream that never started (its replay could not be read): the response stays, for the error. */
  abandon(): void {
    this.ended = true;
    this.readable.destroy();
  }

  /** Disconnects at once, dropping whatever is queued. */
  cut(): void {
    this.ended = true;
    this.sink.destroy();
    this.readable.destroy();
  }
}
