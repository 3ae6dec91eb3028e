import { afterEach, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/api.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

const redisUp = await redisAvailable();
let t: TestApp | undefined;
afterEach(async () => {
  await t?.close().catch(() => {});
  t = undefined;
});

/** The body of a 503 from /readyz, and what the log says about the failed dependency. */
async function notReady(app: TestApp): Promise<{ body: string; problem: Record<string, unknown>; logged: { dependency?: string; err?: { message?: string } } }> {
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  const problem = expectProblem(res, 503, 'unavailable');
  const lines = (await app.settledLogs()).map((line) => JSON.parse(line) as { msg?: string; dependency?: string; err?: { message?: string } });
  return { body: res.body, problem, logged: lines.find((line) => line.msg === 'readiness check failed') ?? {} };
}

describe('health and readiness', () => {
  it('GET /healthz: 200 while the process runs', async () => {
    t = await startTestApp();
    const res = await t.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz: 200 when the database answers, 503 naming it when it does not', async () => {
    t = await startTestApp();
    expect((await t.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    await t.services.database.close();
    const problem = expectProblem(await t.inject({ method: 'GET', url: '/readyz' }), 503, 'unavailable');
    expect(problem.errors).toEqual([{ field: 'database', message: expect.stringMatching(/^unreachable/) }]);
    // Liveness is not readiness: the process itself is fine.
    expect((await t.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  // Regression: the 503 body carried the driver's message ("driver has already been destroyed",
  // "Stream isn't writeable…", "connect ECONNREFUSED host:port"). It names the dependency only; the
  // detail goes to the log.
  it('GET /readyz: the 503 names the database and nothing the driver said, which is logged', async () => {
    t = await startTestApp();
    await t.services.database.close();
    const { body, problem, logged } = await notReady(t);
    expect(problem.detail).toBe('Not ready: database unreachable.');
    expect(problem.errors).toEqual([{ field: 'database', message: 'unreachable' }]);
    expect(logged).toMatchObject({ dependency: 'database', err: { message: expect.any(String) } });
    expect(body).not.toContain(logged.err?.message);
  });

  it('an API request while the database is gone is 503 unavailable with Retry-After, not a 500', async () => {
    t = await startTestApp();
    await t.services.database.close();
    const res = await t.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: { email: 'a@example.com', password: 'x' } });
    expectProblem(res, 503, 'unavailable');
    expect(res.headers['retry-after']).toBe('5');
  });

  it.skipIf(!redisUp)('a REDIS_URL naming a database Redis refuses ran on in database 0, shared with whoever uses it: now the service does not start, naming it', async () => {
    const url = new URL(REDIS_URL);
    url.pathname = '/99';
    await expect(startTestApp({ env: { REDIS_URL: url.href, REDIS_PREFIX: uniquePrefix() } })).rejects.toThrow(/REDIS_URL names database 99, which Redis refuses/);
    // Positive control: a database Redis has.
    url.pathname = '/1';
    t = await startTestApp({ env: { REDIS_URL: url.href, REDIS_PREFIX: uniquePrefix() } });
    expect((await t.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it.skipIf(!redisUp)('GET /readyz: 503 naming Redis when it is configured and gone', async () => {
    t = await startTestApp({ env: { REDIS_URL, REDIS_PREFIX: uniquePrefix() } });
    expect((await t.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    t.services.redis?.disconnect();
    const problem = expectProblem(await t.inject({ method: 'GET', url: '/readyz' }), 503, 'unavailable');
    expect(problem.errors).toEqual([{ field: 'redis', message: expect.stringMatching(/^unreachable/) }]);
  });

  it.skipIf(!redisUp)('GET /readyz: the 503 names Redis and nothing the driver said, which is logged', async () => {
    t = await startTestApp({ env: { REDIS_URL, REDIS_PREFIX: uniquePrefix() } });
    t.services.redis?.disconnect();
    const { body, problem, logged } = await notReady(t);
    expect(problem.detail).toBe('Not ready: redis unreachable.');
    expect(problem.errors).toEqual([{ field: 'redis', message: 'unreachable' }]);
    expect(logged).toMatchObject({ dependency: 'redis', err: { message: expect.any(String) } });
    expect(body).not.toContain(logged.err?.message);
  });
});
