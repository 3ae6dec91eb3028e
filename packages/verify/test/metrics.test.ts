import type { ServerResponse } from 'node:http';
import { Registry, register } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { sampleCount, valueOf } from '../../../test/helpers/metrics.js';
import { request } from '../../../test/helpers/server-process.js';
import { createVerifier } from '../src/index.js';
import { closeAll, json, openStream, outcome, SERVICE, served, verifierOf as fakeVerifierOf } from './fake-upstream.js';
import { apiToken, refusedSoon, sharedRzAuth, until, verifierOf } from './rz-auth.js';

/**
 * Contract §10.3, the verifier's half: `createVerifier({ metrics: registry })` registers the
 * `rz_verify_*` series, and counts into them; without `metrics`, nothing is registered.
 */
const PROPAGATION = 'rz_verify_revocation_propagation_seconds';
const SERIES = ['rz_verify_requests_total', 'rz_verify_cache_hits_total', 'rz_verify_introspection_duration_seconds', 'rz_verify_stream_connected', PROPAGATION];
const requests = (registry: Registry, outcome: string) => valueOf(registry, 'rz_verify_requests_total', { outcome });

describe('against a real rz-auth', () => {
  const shared = sharedRzAuth();
  async function measured(registry = new Registry()) {
    const made = await verifierOf(shared.rz, shared.service, { metrics: registry });
    shared.verifiers.push(made.verifier);
    return { ...made, registry };
  }

  it('registers every series at once, each outcome at zero; the stream gauge follows the stream', async () => {
    const { verifier, registry } = await measured();
    expect(registry.getMetricsAsArray().map((m) => m.name).sort()).toEqual([...SERIES].sort());
    for (const outcome of ['ok', 'unauthorized', 'invalid_request', 'invalid_token', 'unavailable', 'service_credential_refused', 'rate_limited']) expect(await requests(registry, outcome)).toBe(0);
    expect(await valueOf(registry, 'rz_verify_stream_connected')).toBe(1);
    await verifier.close();
    expect(await valueOf(registry, 'rz_verify_stream_connected')).toBe(0);
  });

  it('counts each verify() by outcome, cache hits, introspections, and one propagation sample per revocation', async () => {
    const { verifier, registry } = await measured();
    const { rz, account } = shared;
    const token = await apiToken(rz.url, account);
    await verifier.verify(`Bearer ${token.token}`);
    await verifier.verify(`Bearer ${token.token}`);
    expect([await requests(registry, 'ok'), await valueOf(registry, 'rz_verify_cache_hits_total')]).toEqual([2, 1]);
    expect(await sampleCount(registry, 'rz_verify_introspection_duration_seconds')).toBe(1);
    expect(await outcome(verifier.verify(undefined))).toBe('unauthorized');
    expect(await outcome(verifier.verify(['Bearer a', 'Bearer b']))).toBe('invalid_request');
    expect(await outcome(verifier.verify(`Bearer ${generateToken('api')}`))).toBe('invalid_token');
    expect([await requests(registry, 'unauthorized'), await requests(registry, 'invalid_request'), await requests(registry, 'invalid_token')]).toEqual([1, 1, 1]);

    expect(await sampleCount(registry, PROPAGATION)).toBe(0);
    const before = Date.now();
    expect((await request(rz.url, 'DELETE', `/api/tokens/${token.id}`, { token: account.jwt })).status).toBe(204);
    expect((await refusedSoon(verifier, token.token)).code).toBe('invalid_token');
    expect(await sampleCount(registry, PROPAGATION)).toBe(1);
    // From rz-auth's commit, before its answer, to this process dropping the token: within the test's own span.
    const sum = (await registry.getSingleMetricAsString(PROPAGATION)).match(/_sum (\S+)/)?.[1];
    expect(Number(sum)).toBeLessThanOrEqual((Date.now() - before) / 1000);
    // A narrowing drops the token too, but revokes nothing: no sample.
    const narrowed = await apiToken(rz.url, account, ['games:publish', 'tokens:read']);
    await verifier.verify(`Bearer ${narrowed.token}`);
    expect((await request(rz.url, 'PATCH', `/api/tokens/${narrowed.id}`, { token: account.jwt, body: { scopes: ['tokens:read'] } })).status).toBe(200);
    await until(() => verifier.cacheSize === 1, 'the narrowed token is dropped');
    expect(await sampleCount(registry, PROPAGATION)).toBe(1);
  });

  it('two verifiers given one registry share its series', async () => {
    const registry = new Registry();
    await measured(registry);
    await measured(registry);
    expect(await valueOf(registry, 'rz_verify_stream_connected')).toBe(2);
  });

  it('without metrics, nothing is registered, not even in prom-client\'s default registry', async () => {
    const { verifier } = await verifierOf(shared.rz, shared.service);
    shared.verifiers.push(verifier);
    await verifier.verify(`Bearer ${(await apiToken(shared.rz.url, shared.account)).token}`);
    expect(register.getMetricsAsArray().filter((metric) => metric.name.startsWith('rz_verify'))).toEqual([]);
  });
});

describe('the commit time of an event', () => {
  afterEach(closeAll);

  /** A local rz-auth whose event stream the test writes to, raw, and a verifier of it with metrics. */
  async function upstream() {
    let stream: ServerResponse | undefined;
    const fake = await served({
      '/api/events': (req, res) => {
        openStream(req, res);
        stream = res;
      },
      '/api/introspect': json(() => ({ active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' })),
    });
    const registry = new Registry();
    const verifier = fakeVerifierOf(fake.url, { metrics: registry });
    await until(() => verifier.streaming && stream !== undefined, 'the stream is up');
    const write = (text: string) => void stream?.write(text);
    return { verifier, registry, write };
  }

  it('is measured from on each revocation that carries one; a malformed one, a missing one or a non-revoking event give none', async () => {
    const { verifier, registry, write } = await upstream();
    const token = generateToken('api');
    await verifier.verify(`Bearer ${token}`);
    write(`id: 1\nevent: token.revoked\ncommitted_at: ${Date.now() - 40}\ndata: {"token_id":"t1","token_type":"api_token","user_id":"u1"}\n\n`);
    expect((await refusedSoon(verifier, token)).code).toBe('invalid_token');
    expect(await sampleCount(registry, PROPAGATION)).toBe(1);
    const sumOf = async () => Number((await registry.getSingleMetricAsString(PROPAGATION)).match(/_sum (\S+)/)?.[1]);
    const first = await sumOf();
    expect(first).toBeGreaterThanOrEqual(0.04);
    expect(first).toBeLessThan(5);
    write('id: 2\nevent: token.revoked\ncommitted_at: soon\ndata: {"token_id":"t2","token_type":"api_token","user_id":"u1"}\n\n');
    write('id: 3\nevent: session.revoked\ndata: {"session_id":"s1","user_id":"u1"}\n\n');
    write(`id: 4\nevent: token.updated\ncommitted_at: ${Date.now()}\ndata: {"token_id":"t3","scopes":[]}\n\n`);
    // A commit time from a host whose clock runs ahead counts as no delay, never a negative one.
    write(`id: 5\nevent: user.deleted\ncommitted_at: ${Date.now() + 60_000}\ndata: {"user_id":"u9"}\n\n`);
    write(`id: 6\nevent: app.deleted\ncommitted_at: ${Date.now()}\ndata: {"app_id":"a9","user_id":"u9"}\n\n`);
    const deadline = Date.now() + 5000;
    while ((await sampleCount(registry, PROPAGATION)) < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await sampleCount(registry, PROPAGATION)).toBe(3);
    expect((await sumOf()) - first).toBeGreaterThanOrEqual(0);
    expect((await sumOf()) - first).toBeLessThan(1);
  });

  it('a registry that is not one is refused, naming the option', () => {
    expect(() => createVerifier({ url: 'http://127.0.0.1:1', serviceToken: SERVICE, metrics: {} as Registry })).toThrow('createVerifier: metrics must be a prom-client Registry');
  });
});
