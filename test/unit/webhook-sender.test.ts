import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender, USER_AGENT } from '../../src/webhooks/sender.js';

/** Security bar §12: what the webhook sender does with hostile or odd receivers. */
describe('webhook sender', () => {
  let server: Server;
  let port = 0;
  const hits: IncomingMessage[] = [];
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/ok': (res) => res.writeHead(204).end(),
    '/redirect': (res) => res.writeHead(302, { location: '/ok' }).end(),
    '/huge': (res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(1024 * 1024, 'x'));
    },
    '/silent': () => {},
  };
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req);
      req.resume();
      routes[req.url ?? '']?.(res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const signal = () => new AbortController().signal;
  // Generous, so a loaded machine never times out an answer; the silent receiver gets a short one.
  const allowed = createSender({ allowPrivate: true, timeoutMs: 10_000 });
  const quick = createSender({ allowPrivate: true, timeoutMs: 300 });
  const send = (path: string, sender = allowed, host = '127.0.0.1') => sender(`http://${host}:${port}${path}`, { 'webhook-id': 'msg_1' }, '{"a":1}', signal());

  it('posts the body with our user agent and the given headers, and keeps the status', async () => {
    expect(await send('/ok')).toMatchObject({ statusCode: 204, error: null });
    const last = hits.at(-1);
    expect(last?.method).toBe('POST');
    expect(last?.headers).toMatchObject({ 'user-agent': USER_AGENT, 'webhook-id': 'msg_1', 'content-length': '7' });
  });

  it('follows no redirect, keeps only the status of a huge answer, and times out a silent receiver', async () => {
    const before = hits.length;
    expect(await send('/redirect')).toMatchObject({ statusCode: 302, error: null });
    expect(hits.length).toBe(before + 1);
    expect(await send('/huge')).toMatchObject({ statusCode: 200, error: null });
    expect(await send('/silent', quick)).toMatchObject({ statusCode: null, error: 'timed out after 0.3 s' });
  });

  it('without WEBHOOK_ALLOW_PRIVATE, never connects to a private literal nor to a name that resolves to one (DNS rebinding)', async () => {
    const before = hits.length;
    const strict = createSender({ allowPrivate: false, timeoutMs: 300 });
    expect(await send('/ok', strict)).toMatchObject({ statusCode: null, error: 'refused: a private or reserved address' });
    expect(await send('/ok', strict, '[::ffff:127.0.0.1]')).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused/) });
    // A name that passed registration with a public address now resolves to loopback.
    const rebound = createSender({ allowPrivate: false, timeoutMs: 300, resolve: async () => ['93.184.215.14', '127.0.0.1'] });
    expect(await send('/ok', rebound, 'hooks.example.com')).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused/) });
    expect(hits.length).toBe(before);
  });

  it('an internal name and a name that does not resolve were told apart in the attempt its owner reads: now one reason', async () => {
    const inward = createSender({ allowPrivate: false, timeoutMs: 300, resolve: async () => ['10.0.0.7'] });
    const nowhere = createSender({
      allowPrivate: false,
      timeoutMs: 300,
      resolve: () => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
    });
    const a = await send('/ok', inward, 'intranet.example.com');
    const b = await send('/ok', nowhere, 'nowhere.example.com');
    expect(a.error).toMatch(/^refused/);
    expect(b.error).toBe(a.error);
  });

  it('attempts that timed out while their lookup waited for a slot still ran it later, ahead of other endpoints: now skipped', async () => {
    const started: string[] = [];
    const slowResolve = (host: string) => {
      started.push(host);
      return new Promise<string[]>((resolve) => setTimeout(() => resolve(['127.0.0.1']), host.startsWith('slow') ? 600 : 0));
    };
    const sender = createSender({ allowPrivate: true, timeoutMs: 150, resolve: slowResolve });
    // Two slow names fill both slots; four more wait and time out while waiting.
    const slow = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => send('/ok', sender, `slow${n}.example`)));
    expect(slow.every((r) => r.error === 'timed out after 0.15 s')).toBe(true);
    const patient = createSender({ allowPrivate: true, timeoutMs: 10_000, resolve: slowResolve });
    // Another endpoint waits only for the two lookups already running, not for the abandoned ones.
    expect(await send('/ok', patient, 'fast.example')).toMatchObject({ statusCode: 204, error: null });
    expect(started).toEqual(['slow1.example', 'slow2.example', 'fast.example']);
  });

  it.each([
    ['an unrequested 101 Switching Protocols', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n', { statusCode: 101, error: 'answered with a protocol switch' }],
    ['a connection closed before any answer', '', { statusCode: null, error: 'connection reset' }],
    ['an answer that is not HTTP', 'SSH-2.0-OpenSSH_9.2\r\n', { statusCode: null, error: expect.stringMatching(/^connection failed/) }],
  ])('an attempt answered with %s ends as a failed attempt (a 101 left it pending for ever and wedged the worker)', async (_name, answer, expected) => {
    const raw = createTcpServer((socket) => {
      socket.once('data', () => socket.end(answer));
      socket.on('error', () => {});
    });
    raw.listen(0, '127.0.0.1');
    await once(raw, 'listening');
    try {
      const target = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/hook`;
      expect(await allowed(target, {}, '{}', signal())).toMatchObject(expected);
    } finally {
      raw.close();
    }
  });

  it('reports a refused connection and an abort in words of its own', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const gone = (closed.address() as AddressInfo).port;
    closed.close();
    expect(await allowed(`http://127.0.0.1:${gone}/`, {}, '{}', signal())).toMatchObject({ statusCode: null, error: 'connection refused' });
    const controller = new AbortController();
    const pending = allowed(`http://127.0.0.1:${port}/silent`, {}, '{}', controller.signal);
    controller.abort();
    expect(await pending).toMatchObject({ statusCode: null, error: 'aborted: the server is stopping' });
  });

  it('gives up connecting after the connect timeout, well before the total one; a connected but silent receiver gets the total', async () => {
    let resolved: () => void = () => {};
    const lookupDone = new Promise<void>((resolve) => (resolved = resolve));
    // A name whose resolution takes 800 ms: the connect timeout (200 ms) ends the attempt first.
    const slowName = () => new Promise<string[]>((resolve) => setTimeout(() => (resolve(['127.0.0.1']), resolved()), 800));
    const sender = createSender({ allowPrivate: true, timeoutMs: 5_000, connectTimeoutMs: 200, resolve: slowName });
    const stuck = await send('/ok', sender, 'slow.example');
    expect(stuck).toMatchObject({ statusCode: null, error: 'could not connect within 0.2 s' });
    expect(stuck.durationMs).toBeLessThan(800);
    const silent = createSender({ allowPrivate: true, timeoutMs: 600, connectTimeoutMs: 200 });
    expect(await send('/silent', silent)).toMatchObject({ statusCode: null, error: 'timed out after 0.6 s' });
    expect(await send('/ok', silent)).toMatchObject({ statusCode: 204, error: null });
    // The lookup slot is freed only when the slow resolution really ends: the next test starts with both free.
    await lookupDone;
  });
});
