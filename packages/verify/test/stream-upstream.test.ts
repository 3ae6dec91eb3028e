import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import type { Verifier, VerifierOptions } from '../src/index.js';
import { closeAll, type Fake, json, openStream, served, verifierOf as baseVerifier } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * The event stream against upstreams that misbehave: ids it cannot send back, a refused resume, a
 * stream that flaps, an answer that is no event stream. A local server plays rz-auth.
 */

afterEach(closeAll);

/** The Last-Event-ID each connection to the stream carried, and when it came (performance.now()). */
interface Connection {
  readonly lastEventId: string | undefined;
  readonly at: number;
}

/** rz-auth with `events` answering each connection to the stream (0 for the first); introspection answers active. */
async function upstream(events: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<{ rz: Fake; connections: Connection[] }> {
  const connections: Connection[] = [];
  const rz = await served({
    '/api/events': (req, res) => {
      const header = req.headers['last-event-id'];
      connections.push({ lastEventId: typeof header === 'string' ? header : undefined, at: performance.now() });
      events(connections.length - 1, req, res);
    },
    '/api/introspect': json(() => ({ active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' })),
  });
  return { rz, connections };
}

/** A verifier of `url`, with the failures its stream reports. */
function verifierOf(url: string, options: Partial<VerifierOptions> = {}): { verifier: Verifier; errors: unknown[] } {
  const errors: unknown[] = [];
  return { verifier: baseVerifier(url, { onStreamError: (e) => errors.push(e), ...options }), errors };
}

/** rz-auth refuses a Last-Event-ID that is not a whole number of at most 15 digits with 400. */
const refusesBadIds = (req: IncomingMessage, res: ServerResponse): boolean => {
  const id = req.headers['last-event-id'];
  if (id === undefined || /^[0-9]{1,15}$/.test(String(id))) return false;
  res.writeHead(400).end();
  return true;
};

describe('event ids', () => {
  it.each([
    ['non-ASCII', '7€'],
    ['a control character', '7\x01'],
    ['20,000 characters long', '7'.repeat(20_000)],
    ['not a number', 'abc'],
  ])('one event id %s was kept as Last-Event-ID and every reconnect failed for good: now ignored, the stream resumes after the last good id', async (_what, bad) => {
    const { rz, connections } = await upstream((n, req, res) => {
      if (refusesBadIds(req, res)) return;
      openStream(req, res);
      if (n === 0) res.end(`id: 7\nevent: reset\ndata: {}\n\nid: ${bad}\nevent: reset\ndata: {}\n\n`);
    });
    const { verifier } = verifierOf(rz.url);
    await until(() => connections.length >= 2 && verifier.streaming, 'the stream came back', 3000);
    expect(connections[1]?.lastEventId).toBe('7');
  });

  it('a resume refused with 400 was retried with the same Last-Event-ID forever: now the id is dropped and the stream starts over without it', async () => {
    const { rz, connections } = await upstream((n, req, res) => {
      if (req.headers['last-event-id'] !== undefined) return void res.writeHead(400).end();
      openStream(req, res);
      if (n === 0) res.end('id: 41\nevent: reset\ndata: {}\n\n');
    });
    const { verifier, errors } = verifierOf(rz.url);
    await until(() => connections.length >= 3 && verifier.streaming, 'the stream started over', 3000);
    expect(connections.map((c) => c.lastEventId)).toEqual([undefined, '41', undefined]);
    expect(String(errors[0])).toMatch(/400 to Last-Event-ID/);
  });
});

describe('backoff', () => {
  it('a stream that came up and closed at once was reopened every 10-20 ms forever (the backoff reset on each answer): now it backs off exponentially', async () => {
    const { rz, connections } = await upstream((_n, req, res) => {
      openStream(req, res);
      res.end();
    });
    const { verifier } = verifierOf(rz.url, { reconnectMinMs: 20, reconnectMaxMs: 10_000 });
    await until(() => connections.length >= 6, 'six connections', 5000);
    await verifier.close();
    const gaps = connections.slice(1, 6).map((c, i) => c.at - (connections[i]?.at ?? 0));
    // Each wait is at least half of 20 ms doubled per failure: 20, 40, 80, 160, 320 ms.
    gaps.forEach((gap, i) => expect(gap, JSON.stringify(gaps)).toBeGreaterThanOrEqual(20 * 2 ** i - 5));
  });
});

describe('what counts as a stream', () => {
  it.each([
    { what: 'application/json', type: 'application/json' },
    { what: 'text/html', type: 'text/html; charset=utf-8' },
    { what: 'no Content-Type', type: undefined },
  ])('a 200 of $what counted as the stream being up, and answers were cached on it: now a failure, nothing cached', async ({ type }) => {
    const { rz } = await upstream((_n, _req, res) => {
      res.writeHead(200, type === undefined ? {} : { 'content-type': type });
      res.write(': looks like a stream\n\n');
    });
    const { verifier, errors } = verifierOf(rz.url);
    await until(() => errors.length >= 2, 'the answer was refused twice', 3000);
    expect(verifier.streaming).toBe(false);
    const token = generateToken('api');
    await verifier.verify(`Bearer ${token}`);
    await verifier.verify(`Bearer ${token}`);
    expect(verifier.cacheSize).toBe(0);
    expect(rz.count('/api/introspect')).toBe(2);
  });

  it('text/event-stream with parameters is a stream', async () => {
    const { rz } = await upstream((_n, _req, res) => {
      res.writeHead(200, { 'content-type': 'Text/Event-Stream; charset=utf-8' });
      res.write(': subscribed\n\n');
    });
    const { verifier } = verifierOf(rz.url);
    await until(() => verifier.streaming, 'the stream is up', 3000);
  });
});
