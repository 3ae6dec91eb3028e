import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { leaseOf } from '../src/events.js';
import { closeAll, json, outcome, served, verifierOf } from './fake-upstream.js';
import { apiToken, type RzAuth, serviceToken, signup, startRzAuth, until, verifierOf as connectedTo } from './rz-auth.js';

/**
 * Trust in the cache is a lease renewed by bytes arriving: rz-auth states its heartbeat interval
 * (the `RZ-Heartbeat-Ms` header of the stream), and a connection silent for longer than an
 * interval and a half has stalled, whatever its socket says. A stalled connection delivers no
 * revocation, so the cache it kept correct is no longer used.
 */

afterEach(closeAll);

/** An event stream announcing `heartbeatMs`, its opening sent, then whatever `then` does with it. */
const announcing = (heartbeatMs: number, then: (res: ServerResponse) => void = () => undefined) => (_req: unknown, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'rz-heartbeat-ms': String(heartbeatMs) });
  res.write('retry: 1000\nid: 1\n\n');
  then(res);
};

describe('the lease', () => {
  it.each([
    [null, 45_000, 45_000],
    ['5000', 45_000, 7500],
    ['200', 45_000, 1200],
    ['15000', 20_000, 20_000],
    ['0', 45_000, 45_000],
    ['-1', 45_000, 45_000],
    ['abc', 45_000, 45_000],
    ['1e3', 45_000, 45_000],
    ['99999999', 45_000, 45_000],
  ])('RZ-Heartbeat-Ms %s with streamIdleTimeoutMs %i trusts %i ms of silence', (header, idle, lease) => {
    expect(leaseOf(header, idle)).toBe(lease);
  });

  it('a stalled stream kept the cache in use for streamIdleTimeoutMs (45 s), serving a token revoked meanwhile: now it stops one heartbeat and a half after the last byte', async () => {
    let connections = 0;
    let revoked = false;
    const upstream = await served({
      // The first connection stalls (open, silent); later ones are refused, so the stream stays down.
      '/api/events': (req, res) => (++connections === 1 ? announcing(200)(req, res) : void res.writeHead(503).end()),
      '/api/introspect': json(() => (revoked ? { active: false } : { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' })),
    });
    const verifier = verifierOf(upstream.url, { reconnectMinMs: 60_000, reconnectMaxMs: 60_000 });
    await until(() => verifier.streaming, 'the stream is up');
    const token = `Bearer ${generateToken('api')}`;
    expect(await outcome(verifier.verify(token))).toBe('accepted');
    expect(await outcome(verifier.verify(token))).toBe('accepted');
    expect(upstream.count('/api/introspect')).toBe(1);
    // Revoked while the stream is stalled: the event never comes.
    revoked = true;
    const stalledAt = performance.now();
    await until(() => !verifier.streaming, 'the lease lapsed', 5000);
    expect(performance.now() - stalledAt).toBeLessThan(5000);
    expect(await outcome(verifier.verify(token))).toBe('invalid_token');
    expect(upstream.count('/api/introspect')).toBe(2);
  });

  it('a stream that heartbeats within its lease stays up, on one connection', async () => {
    let beats = 0;
    const upstream = await served({
      '/api/events': announcing(100, (res) => {
        const timer = setInterval(() => {
          beats++;
          res.write(': keep-alive\n\n');
        }, 100);
        res.once('close', () => clearInterval(timer));
      }),
    });
    const verifier = verifierOf(upstream.url);
    await until(() => verifier.streaming, 'the stream is up');
    let wentDown = false;
    // 2.5 s of heartbeats: more than twice the lease of 1.1 s.
    await until(() => {
      wentDown ||= !verifier.streaming;
      return beats >= 25;
    }, '25 heartbeats were sent');
    expect({ wentDown, connections: upstream.count('/api/events') }).toEqual({ wentDown: false, connections: 1 });
  });
});

describe('against a real rz-auth', () => {
  let rz: RzAuth | undefined;
  afterEach(async () => {
    rz?.server.child.kill('SIGCONT');
    await rz?.stop();
  });

  it('an rz-auth frozen mid-stream (SIGSTOP: its socket open, nothing sent) kept the verifier caching for 45 s: now its cache is dropped within the lease of EVENTS_HEARTBEAT_MS', async () => {
    rz = await startRzAuth({ EVENTS_HEARTBEAT_MS: '1000' });
    const service = await serviceToken(rz.env);
    const account = await signup(rz.url);
    const { token } = await apiToken(rz.url, account);
    const { verifier, counted } = await connectedTo(rz, service);
    try {
      await verifier.verify(`Bearer ${token}`);
      await verifier.verify(`Bearer ${token}`);
      expect(verifier.cacheSize).toBe(1);
      rz.server.child.kill('SIGSTOP');
      const frozenAt = performance.now();
      await until(() => !verifier.streaming && verifier.cacheSize === 0, 'the lease lapsed and the cache was dropped', 8000);
      // The lease is 2 s for a heartbeat of 1 s; the bound leaves room for a slow machine.
      expect(performance.now() - frozenAt).toBeLessThan(8000);
      expect(verifier.cacheSize).toBe(0);
      expect(counted.count('/api/introspect')).toBe(1);
    } finally {
      await verifier.close();
    }
  });
});
