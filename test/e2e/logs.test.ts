import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { rawRequest } from '../helpers/real-server.js';
import { request, spawnServer } from '../helpers/server-process.js';

/**
 * The real server's access log on stdout. Lines are written asynchronously in batches, so these
 * tests hold the promises that batching must keep: a lone line still appears promptly when the
 * server is idle, a graceful shutdown loses none, and a reader that stops draining stdout never
 * blocks the server.
 */

interface LogLine {
  readonly msg?: string;
  readonly request_id?: string;
  readonly status?: number;
  readonly method?: string;
  readonly client_error?: string;
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

describe('the access log of a real server', { timeout: 90_000 }, () => {
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

  it('a request Node\'s parser refused, and a CONNECT, were answered with an x-request-id no line had: now each has its access line', async () => {
    const server = await spawnServer(env);
    try {
      const port = Number(new URL(server.url).port);
      const big = await rawRequest(port, `GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}`);
      const tunnel = await rawRequest(port, 'CONNECT /api/me HTTP/1.1\r\nHost: localhost');
      expect([big.status, JSON.parse(big.body).code, big.headers['x-frame-options']]).toEqual([431, 'headers_too_large', 'DENY']);
      expect([tunnel.status, JSON.parse(tunnel.body).code, tunnel.headers.allow]).toEqual([405, 'method_not_allowed', 'GET, HEAD, DELETE']);
      const lineOf = (id: string | undefined) => accessLines(server.output()).find((line) => line.request_id === id);
      expect(await poll(() => lineOf(big.headers['x-request-id']) !== undefined && lineOf(tunnel.headers['x-request-id']) !== undefined, 2_000), server.output()).toBe(true);
      expect(lineOf(big.headers['x-request-id'])).toMatchObject({ status: 431, client_error: 'HPE_HEADER_OVERFLOW' });
      expect(lineOf(tunnel.headers['x-request-id'])).toMatchObject({ status: 405, method: 'CONNECT' });
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('a Redis not reachable at start-up went unlogged (the log did not exist yet, and one outage is told once): now it is logged', async () => {
    // Port 1: nothing listens there, so every connection is refused.
    const server = await spawnServer({ ...env, DATABASE_URL: `sqlite:${join(temp.dir, 'redis-down.db')}`, REDIS_URL: 'redis://127.0.0.1:1' }, 30_000);
    try {
      expect(await server.outputHas('Redis at REDIS_URL is not reachable yet', 3000), server.output()).toBe(true);
      expect(server.output()).toContain('ECONNREFUSED');
    } finally {
      await server.stop('SIGKILL');
    }
  });

  it('a log reader that stops reading never blocks the event loop (the writer used to wait on a full pipe)', async () => {
    const server = await spawnServer(env);
    try {
      // Stop reading the server's stdout: the pipe (64 KiB) fills after a few hundred lines.
      server.child.stdout?.pause();
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(Array.from({ length: 100 }, () => fetch(`${server.url}/api/me?padding=${'p'.repeat(1000)}`, { signal: AbortSignal.timeout(10_000) }).then((res) => res.arrayBuffer())));
      }
      const started = Date.now();
      const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      server.child.stdout?.resume();
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
