import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { SECURITY_HEADERS } from '../../src/http/headers.js';
import { startTestApp, type TestApp, tempDir } from '../helpers/app.js';
import { createApiToken, json, signup } from '../helpers/api.js';
import { type RawResponse, rawRequest, type RealServer, startRealServer } from '../helpers/real-server.js';

/**
 * Requests that Node's HTTP server used to answer by itself (an empty body without the security
 * headers), and requests that two parsers could read differently (a proxy in front and rz-auth):
 * each gets a problem body with the usual headers, or is read the one way there is.
 */
describe('HTTP framing over a real socket', () => {
  let server: RealServer;
  let token: string;
  let jwt: string;

  beforeAll(async () => {
    server = await startRealServer();
    jwt = (await signup(server)).jwt;
    token = (await createApiToken(server, jwt)).token;
  });
  afterAll(() => server.close());

  const send = (lines: string[], body = '', halfClose = false) => rawRequest(server.port, lines.join('\r\n'), body, halfClose);

  function expectProblem(res: RawResponse, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(res.body)).toMatchObject({ status, code, request_id: res.headers['x-request-id'] });
    if (code === 'validation_failed') expect(JSON.parse(res.body).errors).toEqual([expect.objectContaining({ field: expect.any(String) })]);
  }

  describe('Host', () => {
    it.each([
      ['GET /healthz', []],
      ['GET /api/me', ['Authorization: Bearer {t}']],
      ['GET /api/tokens', ['Authorization: Bearer {t}']],
    ])('an HTTP/1.1 request to %s without Host was an empty 400 without the security headers: now a 400 problem', async (target, lines) => {
      const res = await send([`${target} HTTP/1.1`, ...lines.map((l) => l.replace('{t}', token))]);
      expectProblem(res, 400, 'validation_failed');
      expect(JSON.parse(res.body)).toMatchObject({ detail: expect.stringContaining('Host') });
    });

    it.each(['GET /healthz', 'GET /api/me'])('%s with two Host headers was answered: now a 400 problem', async (target) => {
      const res = await send([`${target} HTTP/1.1`, 'Host: localhost', 'Host: evil.example', `Authorization: Bearer ${token}`]);
      expectProblem(res, 400, 'validation_failed');
    });

    it('one Host, and HTTP/1.0 without one, are answered as usual', async () => {
      expect((await send(['GET /api/me HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${token}`])).status).toBe(200);
      expect((await send(['GET /api/me HTTP/1.0', `Authorization: Bearer ${token}`])).status).toBe(200);
    });
  });

  describe('slow requests', () => {
    /** Writes `partial` and never the rest; resolves with what the server answers and when it closed. */
    const stalled = (partial: string) =>
      new Promise<{ text: string; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const chunks: Buffer[] = [];
        const socket = connect(server.port, '127.0.0.1', () => socket.write(partial));
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', (error) => (chunks.length === 0 ? reject(error) : undefined));
        socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), ms: Date.now() - started }));
      });

    it(
      'a request that stopped arriving held its connection for up to 40 s and was answered 400 "not valid HTTP": now a 408 problem after about 10 s',
      async () => {
        const [body, head] = await Promise.all([
          stalled('POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{'),
          stalled('GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: '),
        ]);
        for (const { text, ms } of [body, head]) {
          expect(text).toMatch(/^HTTP\/1\.1 408 /);
          expect(text).toMatch(/content-type: application\/problem\+json/i);
          expect(text).toContain('"code":"request_timeout"');
          // requestTimeout is 10 s, checked every second.
          expect(ms).toBeGreaterThanOrEqual(9_000);
          expect(ms).toBeLessThan(16_000);
        }
      },
      25_000,
    );
  });

  describe('a body the answer did not need', () => {
    /**
     * Sends `head` and then body bytes for as long as the connection stays open (up to 3 s), as a
     * client with a huge Content-Length or endless chunks would; resolves with the answer, whether
     * the server closed the connection, and how many body bytes it let the client write.
     */
    const endless = (head: string, chunked = false) =>
      new Promise<{ text: string; closed: boolean; written: number }>((resolve) => {
        let text = '';
        let written = 0;
        let done = false;
        const piece = 'a'.repeat(64 * 1024);
        const socket = connect(server.port, '127.0.0.1', () => {
          socket.write(`${head}\r\n\r\n`);
          pump();
        });
        const finish = (closed: boolean) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          socket.destroy();
          resolve({ text, closed, written });
        };
        const timer = setTimeout(() => finish(false), 3_000);
        function pump(): void {
          while (!done && !socket.destroyed) {
            written += piece.length;
            if (!socket.write(chunked ? `${piece.length.toString(16)}\r\n${piece}\r\n` : piece)) return void socket.once('drain', pump);
          }
        }
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('end', () => finish(true));
        socket.on('close', () => finish(true));
        socket.on('error', () => finish(true));
      });

    it.each([
      ['a 401 before the body', 'POST /api/tokens', [], false],
      ['a 401, chunked', 'POST /api/tokens', [], true],
      ['a 404', 'POST /nowhere', [], false],
      ['a 415', 'POST /api/auth/login', ['Content-Type: text/plain'], false],
      ['a 413 of GET /api/me with a body', 'GET /api/me', ['Authorization: Bearer {t}'], false],
      ['a 200 of the Developers page with a body', 'GET /developers', [], false],
      ['a 400 of the scope catalogue with a body, chunked', 'GET /api/scopes', [], true],
    ])(
      'after %s the connection stayed open and the server read and discarded whatever followed (gigabytes, unauthenticated): now it closes',
      async (_what, target, lines, chunked) => {
        const framing = chunked ? 'Transfer-Encoding: chunked' : 'Content-Length: 100000000000';
        const extra = (lines as string[]).map((l) => l.replace('{t}', token));
        const res = await endless([`${target} HTTP/1.1`, 'Host: localhost', 'Content-Type: application/json', ...extra, framing].join('\r\n'));
        expect(res.text).toMatch(/^HTTP\/1\.1 [24]\d\d /);
        expect(res.text).toMatch(/\r\nconnection: close\r\n/i);
        expect(res.closed).toBe(true);
        // Bounded by socket buffers, not by how long the client goes on.
        expect(res.written).toBeLessThan(64 * 1024 * 1024);
      },
    );

    it('a request whose body has all arrived keeps its connection alive', async () => {
      const body = '{"name":"kept alive"}';
      const socket = connect(server.port, '127.0.0.1');
      const answers: string[] = [];
      socket.on('data', (chunk: Buffer) => answers.push(chunk.toString('latin1')));
      const request = `POST /api/tokens HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${jwt}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      socket.write(request + request);
      await expect.poll(() => (answers.join('').match(/HTTP\/1\.1 201 /g) ?? []).length, { timeout: 5_000 }).toBe(2);
      expect(answers.join('')).not.toMatch(/connection: close/i);
      socket.destroy();
    });
  });

  describe('a client that closes its sending side after the request', () => {
    // RFC 9112 §9.6: a half-closed connection does not end the client's interest in the answer.
    it('got no answer when one was not ready at once (a login hashes first): now it is answered, then the connection closes', async () => {
      const user = await signup(server);
      const body = JSON.stringify({ email: user.email, password: user.password });
      const login = await send(['POST /api/auth/login HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', `Content-Length: ${body.length}`], body, true);
      expect(login.status).toBe(200);
      expect(JSON.parse(login.body)).toMatchObject({ token: expect.any(String) });
      for (const [target, credential] of [['GET /api/tokens', jwt], ['GET /api/me', token]]) {
        const res = await send([`${target} HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${credential}`], '', true);
        expect([target, res.status]).toEqual([target, 200]);
      }
    });
  });

  describe('Expect', () => {
    it.each(['foo', '200-ok'])(
      'Expect: %s was an empty 417 without the security headers: the expectation is ignored and the request answered',
      async (expectation) => {
        const me = await send(['GET /api/me HTTP/1.1', 'Host: localhost', `Expect: ${expectation}`, `Authorization: Bearer ${token}`]);
        expect(me.status).toBe(200);
        expect(me.headers['x-content-type-options']).toBe('nosniff');
        expect(JSON.parse(me.body)).toMatchObject({ auth: { type: 'api_token' } });
        const refused = await send(['GET /api/me HTTP/1.1', 'Host: localhost', `Expect: ${expectation}`]);
        expectProblem(refused, 401, 'unauthorized');
      },
    );

    it('Expect: 100-continue gets its interim answer, then the answer', async () => {
      const body = '{"name":"continued"}';
      const res = await send(
        ['POST /api/tokens HTTP/1.1', 'Host: localhost', 'Expect: 100-continue', `Authorization: Bearer ${jwt}`, 'Content-Type: application/json', `Content-Length: ${body.length}`],
        body,
      );
      // The interim 100 comes first; the final answer follows it in the same stream.
      expect(res.status).toBe(100);
      expect(res.body).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    });
  });

  describe('Content-Type', () => {
    const body = '{"name":"two types"}';
    it.each([
      ['application/json, then text/plain', ['application/json', 'text/plain']],
      ['text/plain, then application/json', ['text/plain', 'application/json']],
      ['application/json twice', ['application/json', 'application/json']],
    ])('a body under two Content-Type headers (%s) was read as JSON: now 415', async (_what, types) => {
      const res = await send(
        ['POST /api/tokens HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${jwt}`, ...types.map((t) => `Content-Type: ${t}`), `Content-Length: ${body.length}`],
        body,
      );
      expectProblem(res, 415, 'unsupported_media_type');
    });
  });

  describe('the absolute form (GET http://host/path)', () => {
    it('a revocation on another instance was missed for GET http://host/api/me (the catch-up tested the URL as sent): now refused at once', async () => {
      const dir = tempDir();
      const env = { DATABASE_URL: `sqlite:${join(dir.dir, 'shared.db')}` };
      const a = await startRealServer(env);
      const b = await startRealServer(env);
      try {
        const user = await signup(a);
        const { id, token: revoked } = await createApiToken(a, user.jwt);
        const get = () => rawRequest(b.port, ['GET http://rz.example/api/me HTTP/1.1', 'Host: rz.example', `Authorization: Bearer ${revoked}`].join('\r\n'));
        expect((await get()).status).toBe(200);
        expect((await json(a, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
        expectProblem(await get(), 401, 'invalid_token');
      } finally {
        await b.close();
        await a.close();
        dir.remove();
      }
    });
  });

  /**
   * The same app listening with its log in hand (the server above logs nothing): what a client
   * sent that never became a request of Fastify's is still answered with every header and logged.
   */
  describe('answers outside the request listener', () => {
    let logged: TestApp;
    let port: number;
    beforeAll(async () => {
      logged = await startTestApp();
      await logged.app.listen({ port: 0, host: '127.0.0.1' });
      port = (logged.app.server.address() as AddressInfo).port;
    });
    afterAll(() => logged.close());

    const accessLine = async (id: string | undefined): Promise<Record<string, unknown> | undefined> => {
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await expect.poll(() => logged.logs.some((line) => line.includes(`"request_id":"${id}"`)), { timeout: 2_000 }).toBe(true);
      const line = logged.logs.find((l) => l.includes(`"request_id":"${id}"`));
      return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
    };

    function expectEveryHeader(res: RawResponse): void {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect([name, res.headers[name]]).toEqual([name, value]);
      expect(res.headers.connection).toBe('close');
    }

    /** Writes `head` and nothing more; resolves with what the server answers once it closes. */
    const stalled = (head: string) =>
      new Promise<RawResponse>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const socket = connect(port, '127.0.0.1', () => socket.write(head));
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('error', (error) => (chunks.length === 0 ? reject(error) : undefined));
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('latin1');
          const split = text.indexOf('\r\n\r\n');
          const headers = Object.fromEntries(text.slice(0, split).split('\r\n').slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
          resolve({ status: Number(text.split(' ')[1]), headers, body: text.slice(split + 4) });
        });
      });

    it(
      'a request Node\'s parser refused was answered with an x-request-id no log line had, and two of the six security headers: now every header, and an access line',
      async () => {
        const raw = (request: string) => rawRequest(port, request);
        const cases: Array<[string, Promise<RawResponse>, number, string, RegExp]> = [
          ['a 20 KB header', raw(`GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}`), 431, 'headers_too_large', /^HPE_HEADER_OVERFLOW$/],
          ['a bad method', raw('G@T / HTTP/1.1\r\nHost: localhost'), 400, 'validation_failed', /^HPE_INVALID_METHOD$/],
          ['bare LF line endings', stalled('GET /healthz HTTP/1.1\nHost: localhost\n\n'), 400, 'validation_failed', /^HPE_[A-Z_]+$/],
          ['the HTTP/2 preface', stalled('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), 400, 'validation_failed', /^HPE_PAUSED_H2_UPGRADE$/],
          ['Content-Length with Transfer-Encoding', raw('POST /api/tokens HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\nTransfer-Encoding: chunked'), 400, 'validation_failed', /^HPE_[A-Z_]+$/],
          ['the request timeout', stalled('GET /api/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: '), 408, 'request_timeout', /^ERR_HTTP_REQUEST_TIMEOUT$/],
        ];
        for (const [what, answer, status, code, clientError] of cases) {
          const res = await answer;
          expect([what, res.status]).toEqual([what, status]);
          expectProblem(res, status, code);
          expectEveryHeader(res);
          const line = await accessLine(res.headers['x-request-id']);
          expect(line, what).toMatchObject({ level: 30, msg: 'request', status, remote: '127.0.0.1', client_error: expect.stringMatching(clientError) });
          expect(line, what).not.toHaveProperty('method');
          expect(line, what).not.toHaveProperty('url');
        }
      },
      25_000,
    );

    it.each([
      ['CONNECT /api/me', 405, 'method_not_allowed', 'localhost', 'GET, HEAD, DELETE'],
      ['CONNECT /api/tokens/00000000-0000-4000-8000-000000000000', 405, 'method_not_allowed', 'localhost', 'GET, HEAD, PATCH, DELETE'],
      ['CONNECT example.com:443', 404, 'not_found', 'example.com:443', undefined],
      ['CONNECT /healthz', 404, 'not_found', 'localhost', undefined],
    ])('%s got no answer (Node destroyed the socket): now %i %s, an access line, then the connection closes', async (target, status, code, host, allow) => {
      const res = await rawRequest(port, `${target} HTTP/1.1\r\nHost: ${host}`, 'tunnel bytes');
      expectProblem(res, status, code);
      expectEveryHeader(res);
      expect(res.headers.allow).toBe(allow);
      const line = await accessLine(res.headers['x-request-id']);
      expect(line).toMatchObject({ msg: 'request', method: 'CONNECT', url: target.slice('CONNECT '.length), status, remote: '127.0.0.1' });
    });
  });
});
