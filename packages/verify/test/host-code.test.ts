import type { IncomingMessage } from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import type { Caller } from '../src/index.js';
import { closeAll, type Handler, json, openStream, served, verifierOf } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * What the service's own code does around the verifier: a stream-error callback that throws, a
 * middleware chain whose `next()` throws, a response another middleware already sent. None of it
 * may end the service's process (an unhandled rejection does) or stop the verifier.
 */

const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
process.on('unhandledRejection', onRejection);
afterAll(() => void process.off('unhandledRejection', onRejection));

afterEach(async () => {
  await closeAll();
  // Unhandled rejections are reported on a later turn: give them one.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(rejections.splice(0)).toEqual([]);
});

const inactive =
  (delayMs: number): Handler =>
  (req, res) =>
    void req.resume().on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"active":false}'), delayMs));

describe('the service code around the verifier', () => {
  it('an onStreamError that threw was an unhandled rejection (the process ended) and the stream was never retried: now it is retried', async () => {
    const upstream = await served({ '/api/events': (_req, res) => void res.writeHead(500).end() });
    let calls = 0;
    const verifier = verifierOf(upstream.url, {
      onStreamError: () => {
        calls++;
        throw new Error('the logger is not ready');
      },
    });
    await until(() => upstream.count('/api/events') >= 3 && calls >= 3, 'the stream is retried');
    await verifier.close();
  });

  it("the middleware's refusal on a response a timeout had already sent threw ERR_HTTP_HEADERS_SENT in a promise (the process ended): now it leaves it", async () => {
    const upstream = await served({ '/api/events': openStream, '/api/introspect': inactive(200) });
    const middleware = verifierOf(upstream.url).expressMiddleware();
    const nexts: unknown[] = [];
    const service = await served({
      '/': (req, res) => {
        // A request timeout, as connect-timeout or a proxy deadline answers.
        const timer = setTimeout(() => res.writeHead(503).end('timed out'), 50);
        middleware(req, res, (error) => {
          nexts.push(error);
          clearTimeout(timer);
        });
      },
    });
    const res = await fetch(service.url, { headers: { authorization: `Bearer ${generateToken('api')}` } });
    expect([res.status, await res.text()]).toEqual([503, 'timed out']);
    await until(() => upstream.count('/api/introspect') === 1, 'the introspection was asked');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(nexts).toEqual([]);
  });

  it("a next() that threw was an unhandled rejection (the process ended): now the error goes to next(error)", async () => {
    const upstream = await served({ '/api/events': openStream, '/api/introspect': json(() => ({ active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' })) });
    const middleware = verifierOf(upstream.url).expressMiddleware();
    const service = await served({
      '/': (req: IncomingMessage & { caller?: Caller }, res) => {
        middleware(req, res, (error) => {
          if (error === undefined) throw new Error(`the handler of ${req.caller?.userId ?? 'nobody'} broke`);
          res.writeHead(500).end(String((error as Error).message));
        });
      },
    });
    const res = await fetch(service.url, { headers: { authorization: `Bearer ${generateToken('api')}` } });
    expect([res.status, await res.text()]).toEqual([500, 'the handler of u1 broke']);
  });
});
