import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`\n!!! Redis is not reachable at ${REDIS_URL}: the Redis stall tests are SKIPPED.\n`);

/** A TCP relay to Redis that can stop passing Redis's answers on, as a stalled or paused Redis would. */
async function stallableRedis(): Promise<{ url: string; stall: () => void; close: () => Promise<void> }> {
  const target = new URL(REDIS_URL);
  const sockets = new Set<Socket>();
  let stalled = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (data) => upstream.write(data));
    upstream.on('data', (data) => {
      if (!stalled) client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    stall: () => {
      stalled = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Regression: ioredis had no command timeout, so a Redis that kept its connections open but stopped
// answering made every /api request (each first checks the change feed in Redis) hang until it
// answered again, on every instance.
describe.skipIf(!redisUp)('a Redis that stops answering', () => {
  let redis: Awaited<ReturnType<typeof stallableRedis>>;
  let t: TestApp;
  beforeAll(async () => {
    redis = await stallableRedis();
    t = await startTestApp({ env: { REDIS_URL: redis.url, REDIS_PREFIX: uniquePrefix(), RATE_LIMITS: 'on' } });
    expect((await t.inject({ method: 'GET', url: '/api/scopes' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await t.close();
    await redis.close();
  });

  it('made every request hang until it answered: requests are answered within seconds', async () => {
    redis.stall();
    const started = Date.now();
    const answer = await Promise.race([
      t.inject({ method: 'GET', url: '/api/scopes' }).then((res) => res.statusCode),
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer after 15 s'), 15_000)),
    ]);
    expect(answer).toBe(200);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 20_000);
});
