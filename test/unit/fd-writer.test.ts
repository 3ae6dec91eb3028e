import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FdWriter } from '../../src/lib/fd-writer.js';

/*
 * The access log's writer, against real descriptors: a file, and a named pipe whose reader is slow
 * to start (the writer meets a full pipe) or gone (the writer meets EPIPE).
 */

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rz-fd-writer-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens `name` in the test directory for writing; closed by the test. */
const openFile = (name: string): { path: string; fd: number } => {
  const path = join(dir, name);
  return { path, fd: openSync(path, 'w') };
};

/** A named pipe with a reader started first: `script` runs with the pipe open for reading on descriptor 3. */
async function pipeWithReader(name: string, script: string): Promise<{ fd: number; reader: ChildProcess }> {
  const fifo = join(dir, name);
  execFileSync('mkfifo', [fifo]);
  // Opening a pipe's read end waits for a writer: open both ends (which does not wait), then the
  // read end alone, then let go of the first, so that the reader holds no write end of its own.
  const open = `exec 4<>"${fifo}"; exec 3<"${fifo}"; exec 4>&-`;
  const reader = spawn('sh', ['-c', `${open}; echo open; ${script}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(reader.stdout as NodeJS.ReadableStream, 'data');
  // Non-blocking, as a pipe set up by libuv is: a full pipe answers EAGAIN instead of blocking.
  return { fd: openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK), reader };
}

describe('FdWriter', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes each text whole, in order, as UTF-8', () => {
    const { path, fd } = openFile('plain.log');
    const writer = new FdWriter(fd);
    const texts = ['{"msg":"one"}\n', '{"url":"/api/ünïcode/✓/😀"}\n', '', 'x'.repeat(1000) + '\n'];
    for (const text of texts) writer.write(text);
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(texts.join(''));
  });

  it('writes a text larger than its buffer, whatever character falls at the edge', () => {
    const { path, fd } = openFile('large.log');
    const writer = new FdWriter(fd, 16);
    // 13 ASCII bytes, then four-byte characters that straddle the 16-byte edge; then far larger texts.
    const texts = ['a'.repeat(13) + '😀😀\n', 'b'.repeat(14) + 'é\n', '€'.repeat(40_000), 'c'.repeat(300 * 1024), 'short\n'];
    for (const text of texts) writer.write(text);
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(texts.join(''));
  });

  it('waits for a full pipe to drain and loses nothing', { timeout: 20_000 }, async () => {
    const out = join(dir, 'drained.log');
    // The reader starts reading a second after it opened the pipe; the check below allows 600 ms for
    // this process to get from hearing it opened to writing, on a busy machine.
    const { fd, reader } = await pipeWithReader('slow.fifo', `sleep 1; cat <&3 > "${out}"`);
    // Four times what a pipe holds (64 KiB on Linux): the writer must meet EAGAIN and retry.
    const text = Array.from({ length: 4096 }, (_, i) => `{"line":${i},"pad":"${'p'.repeat(40)}"}\n`).join('');
    const started = Date.now();
    new FdWriter(fd).write(text);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    closeSync(fd);
    await once(reader, 'exit');
    expect(readFileSync(out, 'utf8')).toBe(text);
  });

  it('drops what it cannot write once the reader has gone, warns once, and never throws', async () => {
    // The reader exits soon after the writer has opened the pipe, closing the only read end.
    const { fd, reader } = await pipeWithReader('gone.fifo', 'sleep 0.2');
    await once(reader, 'exit');
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation((warning) => void warnings.push(String(warning)));
    const writer = new FdWriter(fd);
    expect(() => writer.write('lost\n')).not.toThrow();
    expect(() => writer.write('lost too\n')).not.toThrow();
    closeSync(fd);
    expect(warnings).toEqual([expect.stringMatching(/^writing to file descriptor \d+ failed, its text is dropped: EPIPE/)]);
  });
});
