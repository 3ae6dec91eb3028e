import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { closeAll, outcome, signer, verifierOf } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * Answers whose body starts and then stalls, from a fetch whose abort does not reach the body:
 * what undici's fetch can do after an abort (the pending read is never settled), and what a custom
 * fetch may do; and a custom fetch that never answers at all, or whose bodies never finish
 * cancelling. Every wait of the verifier must still end: close(), the stream's idle timeout, the
 * timeout of an introspection or of a key set fetch.
 */

afterEach(closeAll);

/** A 200 of `type` that sends `first` and then nothing, ignoring any abort. */
const stalled = (type: string, first: string): Response =>
  new Response(
    new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode(first)),
    }),
    { status: 200, headers: { 'content-type': type } },
  );

/** An answer of `status` whose body's cancel never settles. */
const stuckCancel = (status: number, headers: Record<string, string> = {}): Response =>
  new Response(new ReadableStream<Uint8Array>({ cancel: () => new Promise<void>(() => undefined) }), { status, headers: { 'content-type': 'text/html', ...headers } });

/** A fetch answering each path with `answers[path]()`, 404 elsewhere; requests counted by path. */
function fetchOf(answers: Record<string, () => Response | Promise<Response>>) {
  const paths: string[] = [];
  const fetch = (input: string | URL | Request): Promise<Response> => {
    const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
    paths.push(path);
    return Promise.resolve(answers[path]?.() ?? new Response('{}', { status: 404 }));
  };
  return { fetch, count: (path: string) => paths.filter((p) => p === path).length };
}

const URL_ = 'http://127.0.0.1:9';
const stream = () => stalled('text/event-stream', ': subscribed\n\n');

/** What `promise` came to within `ms`: its value, or 'pending'. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> =>
  Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);


describe('a body that stalls and ignores the abort', () => {
  it('close() never resolved while the event stream was up (the abort left its read pending): now it resolves', async () => {
    const upstream = fetchOf({ '/api/events': stream });
    const verifier = verifierOf(URL_, { fetch: upstream.fetch });
    await until(() => verifier.streaming, 'the stream is up');
    expect(await within(verifier.close().then(() => 'closed'), 2000)).toBe('closed');
    expect(verifier.streaming).toBe(false);
  });

  it('a stream silent past its idle timeout stayed up for ever (caches in use, no events): now it is reopened', async () => {
    const upstream = fetchOf({ '/api/events': stream });
    const errors: unknown[] = [];
    const verifier = verifierOf(URL_, { fetch: upstream.fetch, streamIdleTimeoutMs: 100, onStreamError: (error) => errors.push(error) });
    await until(() => upstream.count('/api/events') >= 3, 'the stream was reopened twice', 5000);
    expect((errors[0] as Error).name).toBe('AbortError');
    await verifier.close();
  });

  it('an introspection answer stalled past timeoutMs left verify() pending for ever: now 503 unavailable', async () => {
    const upstream = fetchOf({ '/api/introspect': () => stalled('application/json', '{"active":') });
    const verifier = verifierOf(URL_, { fetch: upstream.fetch, timeoutMs: 100 });
    expect(await within(outcome(verifier.verify(`Bearer ${generateToken('api')}`)), 3000)).toBe('unavailable');
  });

  it('a key set stalled past timeoutMs left verify() of a user token pending for ever: now 503 unavailable', async () => {
    const keys = await signer('k1');
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: Math.floor(Date.now() / 1000) + 600 });
    const upstream = fetchOf({ '/.well-known/jwks.json': () => stalled('application/json', '{"keys":[') });
    const verifier = verifierOf(URL_, { fetch: upstream.fetch, timeoutMs: 100 });
    expect(await within(outcome(verifier.verify(`Bearer ${jwt}`)), 3000)).toBe('unavailable');
  });
});

describe('a custom fetch that ignores the abort', () => {
  const never = () => new Promise<Response>(() => undefined);

  it('an introspection never answered left verify() pending for ever: now 503 unavailable after timeoutMs', async () => {
    const verifier = verifierOf(URL_, { fetch: fetchOf({ '/api/introspect': never }).fetch, timeoutMs: 100 });
    expect(await within(outcome(verifier.verify(`Bearer ${generateToken('api')}`)), 3000)).toBe('unavailable');
  });

  it('a key set never answered left every user token pending for ever: now 503 unavailable after timeoutMs', async () => {
    const keys = await signer('k1');
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: Math.floor(Date.now() / 1000) + 600 });
    const verifier = verifierOf(URL_, { fetch: fetchOf({ '/.well-known/jwks.json': never }).fetch, timeoutMs: 100 });
    expect(await within(outcome(verifier.verify(`Bearer ${jwt}`)), 3000)).toBe('unavailable');
  });

  it('an event stream never answered held close() and was never retried: now the idle timeout retries it and close() resolves', async () => {
    const upstream = fetchOf({ '/api/events': never });
    const verifier = verifierOf(URL_, { fetch: upstream.fetch, streamIdleTimeoutMs: 100 });
    await until(() => upstream.count('/api/events') >= 2, 'the stream is asked for again', 5000);
    expect(await within(verifier.close().then(() => 'closed'), 2000)).toBe('closed');
  });

  it("a refusal whose body's cancel never settles left verify() and close() pending: now each ends", async () => {
    const upstream = fetchOf({
      '/api/introspect': () => stuckCancel(500),
      '/.well-known/jwks.json': () => stuckCancel(200, { 'content-type': 'application/json', 'content-length': '999999' }),
      '/api/events': () => stuckCancel(503),
    });
    const keys = await signer('k1');
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: Math.floor(Date.now() / 1000) + 600 });
    const verifier = verifierOf(URL_, { fetch: upstream.fetch, timeoutMs: 100 });
    expect(await within(outcome(verifier.verify(`Bearer ${generateToken('api')}`)), 3000)).toBe('unavailable');
    expect(await within(outcome(verifier.verify(`Bearer ${jwt}`)), 3000)).toBe('unavailable');
    await until(() => upstream.count('/api/events') >= 2, 'the stream is asked for again', 5000);
    expect(await within(verifier.close().then(() => 'closed'), 2000)).toBe('closed');
  });
});
