import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/app.js';
import { startOtlpSink, type SunkSpan } from '../helpers/otlp-sink.js';
import { assertBuilt, builtCli, request, ROOT, spawnNode } from '../helpers/server-process.js';
import { REDIS_URL, redisAvailable, uniquePrefix } from '../helpers/services.js';

const SERVER = 2;
const hasRedis = await redisAvailable();

/** Starts `node [--import record-modules] dist/cli.js serve` on a fresh SQLite file; `log` records what it loads. */
async function serve(dir: string, env: Record<string, string>, log?: string) {
  const preload = log === undefined ? [] : ['--import', join(ROOT, 'test', 'helpers', 'record-modules.mjs')];
  return spawnNode([...preload, builtCli(), 'serve'], { DATABASE_URL: `sqlite:${join(dir, `${randomUUID()}.db`)}`, ...env, ...(log === undefined ? {} : { RZ_MODULE_LOG: log }) });
}

const openTelemetry = (loaded: string) => loaded.split('\n').filter((m) => /@opentelemetry[/\\]|@fastify[/\\]otel|dist[/\\]tracing\.js/.test(m));

describe('tracing in the built server (dist/cli.js)', () => {
  let dir: { dir: string; remove: () => void };
  beforeAll(() => {
    assertBuilt();
    dir = tempDir();
  });
  afterAll(() => dir.remove());

  it('off unless configured: no OpenTelemetry module is loaded at all (and, configured, the SDK is)', async () => {
    const off = join(dir.dir, 'off.log');
    const on = join(dir.dir, 'on.log');
    for (const [log, env] of [[off, {}], [on, { OTEL_TRACES_EXPORTER: 'console' }]] as const) {
      const server = await serve(dir.dir, env, log);
      expect((await request(server.url, 'GET', '/api/me')).status).toBe(401);
      expect(await server.stop()).toBe(0);
    }
    const loadedOff = readFileSync(off, 'utf8');
    // The recorder saw the server's own modules: it would have seen these too.
    expect(loadedOff).toMatch(/node_modules[/\\]argon2[/\\]/);
    expect(openTelemetry(loadedOff)).toEqual([]);
    const loadedOn = openTelemetry(readFileSync(on, 'utf8')).join('\n');
    for (const name of ['dist/tracing.js', '@opentelemetry/sdk-node', '@opentelemetry/instrumentation-http']) expect(loadedOn).toContain(name);
  });

  describe.skipIf(!hasRedis)('exported over OTLP/HTTP', () => {
    let sink: Awaited<ReturnType<typeof startOtlpSink>>;
    beforeAll(async () => {
      sink = await startOtlpSink();
    });
    afterAll(() => sink.close());

    const waitFor = async (what: string, found: () => boolean) => {
      for (let i = 0; i < 200 && !found(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(found(), what).toBe(true);
    };
    const serverOf = (span: SunkSpan): SunkSpan | undefined => {
      for (let s: SunkSpan | undefined = span; s; s = sink.spans.find((p) => p.spanId === s?.parentSpanId)) if (s.kind === SERVER) return s;
      return undefined;
    };

    it('server spans by route, with the Redis and password spans under them, and the service name rz-auth (SQLite has no driver spans)', async () => {
      const env = { REDIS_URL, REDIS_PREFIX: uniquePrefix(), OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_RECORD_CLIENT_IP: 'true' };
      const server = await serve(dir.dir, env);
      const email = `e2e-${randomUUID().slice(0, 8)}@example.com`;
      const signup = await request(server.url, 'POST', '/api/auth/signup', { body: { email, username: `e2e_${randomUUID().slice(0, 8)}`, password: 'correct horse battery staple' } });
      expect(signup.status).toBe(201);
      const login = await request(server.url, 'POST', '/api/auth/login', { body: { email, password: 'correct horse battery staple' } });
      const jwt = (login.body as { token: string }).token;
      expect((await request(server.url, 'GET', '/api/me', { token: jwt })).status).toBe(200);
      await waitFor('the GET /api/me span', () => sink.spans.some((s) => s.name === 'GET /api/me'));
      expect(await server.stop()).toBe(0);

      expect(sink.spans.find((s) => s.name === 'GET /api/me')?.attributes).toMatchObject({ 'rz.auth.token_type': 'user', 'rz.auth.outcome': 'ok', 'http.route': '/api/me', 'client.address': '127.0.0.1' });
      expect(serverOf(sink.spans.find((s) => s.name === 'rz.password.verify') as SunkSpan)?.name).toBe('POST /api/auth/login');
      const redis = sink.spans.filter((s) => s.scope === '@opentelemetry/instrumentation-ioredis');
      expect(redis.map((s) => serverOf(s)?.name)).toContain('POST /api/auth/login');
      expect(sink.spans.every((s) => s.resource['service.name'] === 'rz-auth')).toBe(true);
      const text = sink.bodies.join('\n');
      expect(text).not.toContain(email);
      expect(text).not.toContain(jwt);
    });
  });
});
