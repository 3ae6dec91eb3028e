import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { request, spawnServer } from '../helpers/server-process.js';

/**
 * The real server's access log on stdout. The lines of one event-loop turn are written together at
 * the end of the turn, so these tests hold the two promises that batching must keep: a lone line
 * still appears promptly when the server is idle, and a graceful shutdown loses none.
 */

interface LogLine {
  readonly msg?: string;
  readonly request_id?: string;
  readonly status?: number;
}

function accessLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === 'request');
}

async function poll(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

describe('the access log of a real server', { timeout: 60_000 }, () => {
  const temp = tempDir();
  afterAll(() => temp.remove());
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', LOG_LEVEL: 'info' };

  it('a single request on an idle server is logged within half a second, with its request id', async () => {
    const server = await spawnServer(env);
    try {
      const res = await request(server.url, 'GET', '/api/me');
      expect(res.status).toBe(401);
      const id = res.headers.get('x-request-id');
      expect(id).toBeTruthy();
      const started = Date.now();
      const seen = await poll(() => accessLines(server.output()).some((line) => line.request_id === id), 2_000);
      expect(seen, server.output()).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('a graceful shutdown right after a burst of requests loses no line', async () => {
    const server = await spawnServer(env);
    const ids = new Set<string>();
    await Promise.all(
      Array.from({ length: 300 }, async () => {
        const res = await request(server.url, 'GET', '/api/me');
        ids.add(res.headers.get('x-request-id') ?? '');
      }),
    );
    expect(await server.stop('SIGTERM')).toBe(0);
    const logged = new Set(accessLines(server.output()).map((line) => line.request_id));
    expect([...ids].filter((id) => !logged.has(id))).toEqual([]);
  });
});
