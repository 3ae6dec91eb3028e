import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { metricsEnv, sampleCount } from '../helpers/metrics.js';
import { createService } from '../helpers/platform.js';
import { type RealServer, startRealServer } from '../helpers/real-server.js';
import { scaleOutEnv } from '../helpers/scale-out.js';
import { assertBuilt, freePort, request, ROOT, type ServerProcess, spawnNode } from '../helpers/server-process.js';
import { postgresAvailable, redisAvailable } from '../helpers/services.js';

/**
 * Contract §10.6: rz_revocation_propagation_seconds and the verifier's twin record one sample per
 * revocation on every instance. Two rz-auth instances on one PostgreSQL and one Redis (in process,
 * each with its own registry, read directly), and the example service (examples/resource-server,
 * a real process using @rz-auth/verify, its stream on instance A) serving its registry on
 * METRICS_PORT. Revocations are made on both instances, so each instance measures its own and the
 * other's.
 */
const REVOCATIONS = 8;
const PROPAGATION = 'rz_revocation_propagation_seconds';
const VERIFY_PROPAGATION = 'rz_verify_revocation_propagation_seconds';

const infra = (await postgresAvailable()) && (await redisAvailable());

/** One series' value in a Prometheus text exposition. */
const seriesIn = (text: string, series: string): number => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');

describe.skipIf(!infra)('revocation propagation, measured on two instances and in a service', () => {
  const env = scaleOutEnv();
  const instances: RealServer[] = [];
  let example: ServerProcess;
  let metricsUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    instances.push(await startRealServer({ ...env, ...(await metricsEnv()) }), await startRealServer({ ...env, ...(await metricsEnv()) }));
    const [a] = instances as [RealServer, RealServer];
    const service = await createService(a, 'games');
    user = await signup(a);
    // The example imports the package's dist/: never a build older than its sources.
    assertBuilt();
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const streamUp = async (url: string) => ((await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).json()) as { events?: string }).events === 'up';
    example = await spawnNode([join(ROOT, 'examples', 'resource-server', 'server.mjs')], { RZ_AUTH_URL: a.url, RZ_SERVICE_TOKEN: service.token, METRICS_PORT: String(metricsPort) }, { ready: streamUp });
  }, 60_000);
  afterAll(async () => {
    await example?.stop('SIGKILL');
    for (const instance of instances.splice(0)) await instance.close();
  });

  const exampleMetrics = async () => (await fetch(metricsUrl)).text();

  it(`${REVOCATIONS} revocations, alternately on each instance: exactly ${REVOCATIONS} samples on each instance and in the service`, async () => {
    const [a, b] = instances as [RealServer, RealServer];
    const tokens = [];
    for (let i = 0; i < REVOCATIONS; i++) {
      const token = await createApiToken(a, user.jwt);
      // In the service's cache, so that its refusal comes from the event, not a new introspection.
      expect((await request(example.url, 'GET', '/whoami', { token: token.token })).status).toBe(200);
      tokens.push(token);
    }
    expect(await sampleCount(a.services.metrics, PROPAGATION)).toBe(0);
    expect(seriesIn(await exampleMetrics(), `${VERIFY_PROPAGATION}_count`)).toBe(0);

    for (const [i, token] of tokens.entries()) {
      const on = i % 2 === 0 ? a : b;
      expect((await json(on, 'DELETE', `/api/tokens/${token.id}`, undefined, user.jwt)).statusCode).toBe(204);
    }
    const counts = async () => [await sampleCount(a.services.metrics, PROPAGATION), await sampleCount(b.services.metrics, PROPAGATION), seriesIn(await exampleMetrics(), `${VERIFY_PROPAGATION}_count`)];
    const deadline = Date.now() + 5000;
    while ((await counts()).some((n) => n < REVOCATIONS) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    // And no more than one each: a sample per revocation, not per read of the log or per stream.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await counts()).toEqual([REVOCATIONS, REVOCATIONS, REVOCATIONS]);
    for (const token of tokens) expect((await request(example.url, 'GET', '/whoami', { token: token.token })).status).toBe(401);

    const text = await exampleMetrics();
    const mean = (sum: number, count: number) => `${Math.round((sum / count) * 1e4) / 10} ms`;
    const registries = [a, b].map((s) => s.services.metrics);
    const sums = await Promise.all(registries.map(async (r) => seriesIn((await r?.getSingleMetricAsString(PROPAGATION)) ?? '', `${PROPAGATION}_sum`)));
    console.log(
      `mean propagation: instance A ${mean(sums[0] ?? NaN, REVOCATIONS)}, instance B ${mean(sums[1] ?? NaN, REVOCATIONS)}, service ${mean(seriesIn(text, `${VERIFY_PROPAGATION}_sum`), REVOCATIONS)}`,
    );
    // Within the 100 ms bar on loopback: every sample in the buckets up to 0.1 s.
    expect(seriesIn(text, `${VERIFY_PROPAGATION}_bucket{le="0.1"}`)).toBe(REVOCATIONS);
    for (const r of registries) expect(seriesIn((await r?.getSingleMetricAsString(PROPAGATION)) ?? '', `${PROPAGATION}_bucket{le="0.1"}`)).toBe(REVOCATIONS);
  });
});
