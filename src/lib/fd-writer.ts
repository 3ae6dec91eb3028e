import { writeSync } from 'node:fs';

/** How long to wait before trying again when the descriptor cannot take more (a full pipe). */
const RETRY_MS = 10;
/** Kept between writes up to this size; a larger text gets a buffer of its own, then freed. */
const KEPT_BYTES = 256 * 1024;
/** UTF-8 needs at most this many bytes for one character. */
const MAX_CHAR_BYTES = 4;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes text to a file descriptor synchronously, encoding it into one buffer that is reused from
 * write to write: what the access log hands stdout once per event-loop turn.
 *
 * pino's destination (sonic-boom 4, and 5 alike) takes a string, measures it with
 * `Buffer.byteLength`, writes it, then copies all of it into a new Buffer to work out what a
 * partial write left over. Under the benchmark's loads that is a 6 to 8 kB allocation outside the
 * V8 heap per turn, freed only by the next garbage collection: up to 6 MB of them waiting at once
 * during a login flood, which grew glibc's heap by 3 to 5 MB (README, Memory), and two passes over
 * every batch that one encoding here replaces.
 *
 * When the descriptor is a non-blocking pipe that is full, the write waits and tries again, as
 * pino's synchronous destination does: a reader that stops draining slows the writer down rather
 * than letting memory grow. Any other failure (the reader has gone: EPIPE) drops that text, with a
 * warning on stderr the first time, and never throws into the request that logged it.
 */
export class FdWriter {
  private buffer: Buffer;
  private warned = false;

  constructor(
    private readonly fd: number,
    initialBytes = 64 * 1024,
  ) {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(initialBytes, MAX_CHAR_BYTES * 2));
  }

  write(text: string): void {
    let buffer = this.buffer;
    let length = buffer.write(text);
    // Within a character's width of the end, the text may not all have fit: measure it.
    if (length > buffer.length - MAX_CHAR_BYTES) {
      const needed = Buffer.byteLength(text);
      if (needed > buffer.length - MAX_CHAR_BYTES) {
        buffer = Buffer.allocUnsafeSlow(2 ** Math.ceil(Math.log2(needed + MAX_CHAR_BYTES)));
        if (buffer.length <= KEPT_BYTES) this.buffer = buffer;
        length = buffer.write(text);
      }
    }
    for (let at = 0; at < length; ) {
      try {
        at += writeSync(this.fd, buffer, at, length - at);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(sleeper, 0, 0, RETRY_MS);
          continue;
        }
        this.warn(error as Error);
        return;
      }
    }
  }

  private warn(error: Error): void {
    if (this.warned) return;
    this.warned = true;
    process.emitWarning(`writing to file descriptor ${this.fd} failed, its text is dropped: ${error.message}`, 'FdWriterWarning');
  }
}
