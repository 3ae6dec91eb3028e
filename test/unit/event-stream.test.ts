import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatReset } from '../../src/events/format.js';
import { EventStream } from '../../src/events/stream.js';

/** A response whose client never reads: writes are accepted and never acknowledged. */
function stalledResponse(): Writable & { destroyed: boolean } {
  return new Writable({ highWaterMark: 1024, write: () => undefined });
}

const chunk = (id: number) => `id: ${id}\nevent: session.revoked\ndata: {"session_id":"${'s'.repeat(36)}"}\n\n`;

describe('an event stream', () => {
  it('cuts a client that never reads once its queue passes the cap, and holds nothing more after', async () => {
    const sink = stalledResponse();
    let closed = 0;
    const stream = new EventStream('c', sink, 64 * 1024, () => closed++);
    stream.readable.pipe(sink);
    stream.live(0, 'retry: 1000\n\n');
    let most = 0;
    let id = 0;
    let total = 'retry: 1000\n\n'.length;
    while (!sink.destroyed && id < 10_000) {
      stream.deliver(++id, chunk(id));
      total += chunk(id).length;
      if (!sink.destroyed) most = Math.max(most, stream.readable.readableLength + sink.writableLength);
      await Promise.resolve();
    }
    expect(sink.destroyed).toBe(true);
    expect(most).toBeLessThanOrEqual(64 * 1024);
    expect(total).toBeGreaterThan(64 * 1024);
    expect(total - chunk(id).length).toBeLessThanOrEqual(64 * 1024);
    await new Promise(setImmediate);
    expect(closed).toBeGreaterThan(0);
    const held = stream.readable.readableLength;
    for (let i = 0; i < 1000; i++) stream.deliver(++id, chunk(id));
    expect(stream.readable.readableLength).toBe(held);
  });

  it('while a resumed stream reads its replay, live events wait; then only those after the replay are sent, in order', () => {
    const sink = new Writable({ write: (_c, _e, done) => done() });
    const stream = new EventStream('c', sink, 64 * 1024, () => undefined);
    stream.deliver(5, chunk(5));
    stream.deliver(6, chunk(6));
    stream.reset(6);
    stream.deliver(7, chunk(7));
    stream.live(6, 'retry: 1000\n\nREPLAY UP TO 6\n');
    stream.deliver(7, chunk(7));
    stream.deliver(8, chunk(8));
    let sent = '';
    while (stream.readable.readableLength > 0) sent += String(stream.readable.read());
    expect(sent).toBe(`retry: 1000\n\nREPLAY UP TO 6\n${formatReset(6)}${chunk(7)}${chunk(8)}`);
  });

  it('ends after what is queued, once; the client then reconnects', () => {
    const sink = new Writable({ write: (_c, _e, done) => done() });
    let closed = 0;
    const stream = new EventStream('c', sink, 64 * 1024, () => closed++);
    stream.live(0, 'retry: 1000\n\n');
    stream.end();
    stream.end();
    stream.deliver(1, chunk(1));
    expect(String(stream.readable.read())).toBe('retry: 1000\n\n');
    expect(stream.readable.read()).toBeNull();
    expect(stream.readable.readableEnded || stream.readable.readableLength === 0).toBe(true);
    expect(closed).toBe(1);
  });
});
