import { randomUUID } from 'node:crypto';
import { METHODS } from 'node:http';
import type { HTTPMethods, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { registryOf } from '../helpers/metrics.js';

const REQUESTS = 10_000;

/** Every label and the values it may take; `route` is checked against the app's own routes. */
const CLOSED: Readonly<Record<string, ReadonlySet<string>>> = {
  method: new Set(METHODS),
  token_type: new Set(['user', 'api_token', 'app_token', 'service', 'none']),
  outcome: new Set(['ok', 'invalid_token', 'insufficient_scope', 'rate_limited', 'network_refused', 'success', 'invalid_credentials', 'failure', 'gave_up']),
  policy: new Set(['credential', 'address', 'login-address', 'login-email', 'passkey-address', 'signup-address', 'signup-email', 'password-reset-address', 'password-reset-email', 'verify-email', 'leak-report', 'service']),
  state: new Set(['active', 'retired']),
  op: new Set(['hash', 'verify']),
  active: new Set(['true', 'false']),
  origin: new Set(['api', 'rotation']),
  reason: new Set(['user', 'rotation', 'expired', 'idle', 'leak', 'app_deleted', 'user_deleted', 'lost_publish', 'redis_reset', 'resync']),
  type: new Set(['token.revoked', 'token.updated', 'session.revoked', 'user.deleted', 'app.deleted', 'keys.changed']),
};

/** The i-th hostile request: a distinct token, user agent, forwarded address and path each time. */
function request(i: number): InjectOptions {
  const headers = {
    'user-agent': `agent-${i}-${randomUUID()}`,
    'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    authorization: `Bearer ${i % 2 === 0 ? generateToken('api') : `eyJ${randomUUID()}.${i}.x`}`,
  };
  switch (i % 5) {
    case 0:
      return { method: 'GET', url: '/api/me', headers };
    case 1:
      return { method: 'GET', url: `/unknown/${i}/${randomUUID()}?q=${i}`, headers };
    case 2:
      // Every other one badly percent-encoded: answered outside any route's hooks (Fastify's frameworkErrors).
      return { method: 'DELETE', url: `/api/tokens/${randomUUID()}${i % 2 === 0 ? '' : '%E0%A4%A'}`, headers };
    case 3:
      return { method: METHODS[i % METHODS.length] as InjectOptions['method'], url: `/api/${randomUUID()}`, headers };
    default:
      return { method: 'POST', url: '/api/introspect', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: `token=${i}` };
  }
}

describe('cardinality', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_ADDR: '127.0.0.1:9464', TRUST_PROXY: '127.0.0.1' } });
  });
  afterAll(() => t.close());

  it(`keeps ${REQUESTS} requests with distinct tokens, agents, addresses and paths under 500 series, every label from its closed set`, async () => {
    for (let start = 0; start < REQUESTS; start += 200) {
      await Promise.all(Array.from({ length: 200 }, (_, k) => t.inject(request(start + k))));
    }
    const metrics = await registryOf(t).getMetricsAsJSON();
    const series = metrics.reduce((n, m) => n + m.values.length, 0);
    expect(series).toBeLessThan(500);
    const requests = metrics.find((m) => m.name === 'rz_http_requests_total');
    expect(requests?.values.reduce((n, v) => n + v.value, 0)).toBe(REQUESTS);
    for (const metric of metrics.filter((m) => m.name.startsWith('rz_'))) {
      for (const { labels } of metric.values) {
        for (const [name, raw] of Object.entries(labels)) {
          const value = String(raw);
          if (name === 'route') expect(value === 'unmatched' || t.app.hasRoute({ method: String(labels.method) as HTTPMethods, url: value }), value).toBe(true);
          else if (name === 'status') expect(value).toMatch(/^[1-5]\d\d$/);
          else if (name === 'le') expect(value).toMatch(/^(\d+(\.\d+)?|\+Inf)$/);
          else expect(CLOSED[name]?.has(value), `${metric.name} ${name}="${value}"`).toBe(true);
        }
      }
    }
  }, 120_000);
});
