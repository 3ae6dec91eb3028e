import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../../../test/helpers/real-server.js';
import type { Caller, Verifier } from '../src/index.js';
import { type Account, apiToken, type RzAuth, serviceToken, signup, startRzAuth, verifierOf } from './rz-auth.js';

/** The Fastify plugin and the (req, res, next) middleware, each on a real listening server. */

let rz: RzAuth;
let verifier: Verifier;
let account: Account;
let scoped: string;
let plain: string;
let loopbackOnly: string;
let elsewhereOnly: string;
beforeAll(async () => {
  rz = await startRzAuth();
  verifier = (await verifierOf(rz, await serviceToken(rz.env))).verifier;
  account = await signup(rz.url);
  scoped = (await apiToken(rz.url, account, ['games:publish'])).token;
  plain = (await apiToken(rz.url, account)).token;
  loopbackOnly = (await apiToken(rz.url, account, [], ['127.0.0.0/8'])).token;
  elsewhereOnly = (await apiToken(rz.url, account, [], ['192.0.2.0/24'])).token;
}, 60_000);
afterAll(async () => {
  await verifier.close();
  await rz.stop();
});

const port = (server: Server): number => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};

/** The same three routes on each framework: open, any token, games:publish. */
function checks(base: () => string, listening: () => number) {
  const get = (path: string, token?: string) => fetch(`${base()}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });

  it('a route without the option is open; a protected one sees the caller', async () => {
    expect((await get('/open')).status).toBe(200);
    const res = await get('/any', plain);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user: account.userId, type: 'api_token' });
  });

  it('refusals carry the status, the challenge, no-store and a JSON code', async () => {
    const none = await get('/any');
    expect([none.status, none.headers.get('www-authenticate'), none.headers.get('cache-control'), await none.json()]).toEqual([
      401,
      'Bearer realm="rz"',
      'no-store',
      { code: 'unauthorized', message: expect.any(String) },
    ]);
    const scope = await get('/publish', plain);
    expect([scope.status, scope.headers.get('www-authenticate'), ((await scope.json()) as { code: string }).code]).toEqual([
      403,
      'Bearer realm="rz", error="insufficient_scope", scope="games:publish"',
      'insufficient_scope',
    ]);
    expect((await get('/publish', scoped)).status).toBe(200);
  });

  it("applies a token's allow-list to the client's address (here 127.0.0.1)", async () => {
    expect((await get('/any', loopbackOnly)).status).toBe(200);
    const refused = await get('/any', elsewhereOnly);
    expect([refused.status, refused.headers.get('www-authenticate'), ((await refused.json()) as { code: string }).code]).toEqual([
      401,
      'Bearer realm="rz", error="invalid_token"',
      'invalid_token',
    ]);
  });

  it('two Authorization headers: 400 invalid_request', async () => {
    const res = await rawRequest(listening(), `GET /any HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${plain}\r\nAuthorization: Bearer ${scoped}`);
    expect([res.status, JSON.parse(res.body).code]).toEqual([400, 'invalid_request']);
  });
}

describe('fastifyPlugin', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    await app.register(verifier.fastifyPlugin);
    const reply = (request: { caller: Caller | null }) => ({ user: request.caller?.userId, type: request.caller?.tokenType });
    app.get('/open', async () => ({ ok: true }));
    app.get('/any', { config: { rzAuth: true } }, async (request) => reply(request as unknown as { caller: Caller | null }));
    app.get('/publish', { config: { rzAuth: { scopes: ['games:publish'] } } }, async (request) => reply(request as unknown as { caller: Caller | null }));
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());
  checks(
    () => `http://127.0.0.1:${port(app.server)}`,
    () => port(app.server),
  );

  it('a route declared before the plugin, or while its registration was still queued, was served without a token: now refused', async () => {
    const other = Fastify();
    other.get('/before', { config: { rzAuth: true } }, async () => ({ served: true }));
    // Registered without await, as Fastify allows: the route below is declared before the plugin runs.
    void other.register(verifier.fastifyPlugin);
    other.get('/queued', { config: { rzAuth: { scopes: ['games:publish'] } } }, async () => ({ served: true }));
    await other.register(async (child) => {
      child.get('/child', { config: { rzAuth: true } }, async () => ({ served: true }));
    });
    other.get('/open', async () => ({ served: true }));
    await other.ready();
    for (const url of ['/before', '/queued', '/child']) {
      const res = await other.inject({ url });
      expect([url, res.statusCode, res.headers['www-authenticate']]).toEqual([url, 401, 'Bearer realm="rz"']);
      const withToken = await other.inject({ url, headers: { authorization: `Bearer ${scoped}` } });
      expect([url, withToken.statusCode]).toEqual([url, 200]);
    }
    expect((await other.inject({ url: '/open' })).statusCode).toBe(200);
    await other.close();
  });

  it('refuses a bad route option when the route is declared', async () => {
    const other = Fastify();
    await other.register(verifier.fastifyPlugin);
    expect(() => other.get('/x', { config: { rzAuth: { scopes: 'games:publish' } } }, async () => ({}))).toThrow(/rzAuth/);
    expect(() => other.get('/y', { config: { rzAuth: { scopes: ['games:"publish'] } } }, async () => ({}))).toThrow(/not a scope name/);
    expect(() => verifier.expressMiddleware('Games')).toThrow(/not a scope name/);
    await other.close();
  });
});

describe('expressMiddleware', () => {
  let server: Server;
  beforeAll(async () => {
    const any = verifier.expressMiddleware();
    const publish = verifier.expressMiddleware('games:publish');
    // The smallest Connect: a path, a middleware, a handler that runs when it calls next().
    server = createServer((req: IncomingMessage & { caller?: Caller }, res: ServerResponse) => {
      const done = () => res.end(JSON.stringify({ user: req.caller?.userId, type: req.caller?.tokenType }));
      if (req.url === '/open') return void res.end('{}');
      const middleware = req.url === '/publish' ? publish : any;
      middleware(req, res, (error) => (error ? res.writeHead(500).end() : done()));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  checks(
    () => `http://127.0.0.1:${port(server)}`,
    () => port(server),
  );
});
