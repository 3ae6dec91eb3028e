import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stub's token endpoint answers for one poll: an OAuth error code, or the token. */
export type PollAnswer = 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'invalid_grant' | 'token';

export interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface StubOptions {
  /** Decides each poll's answer; the default approves at the first poll. */
  poll?: (pollNumber: number) => PollAnswer;
  expiresIn?: number;
  interval?: number;
  /** The issuer the metadata names; the stub's own origin by default. */
  issuer?: (origin: string) => string;
  token?: string;
  expiresAt?: string | null;
  scopes?: string[];
  username?: string;
}

export const STUB_TOKEN = 'rz_' + 'a1B2c3D4e5'.repeat(4) + 'XyZ' + 'Q7w8e9';

/**
 * An rz-auth stand-in speaking contract §13.4/§13.5 and GET /api/me, on a random loopback port.
 * It records every request so tests can assert what the CLI sent.
 */
export async function startStub(options: StubOptions = {}) {
  const seen: Seen[] = [];
  const revoked: string[] = [];
  const token = options.token ?? STUB_TOKEN;
  let polls = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(value));
  };
  function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
    const form = new URLSearchParams(body);
    const route = `${req.method} ${req.url}`;
    if (route === 'GET /.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: options.issuer?.(origin) ?? origin,
        device_authorization_endpoint: `${origin}/oauth/device_authorization`,
        token_endpoint: `${origin}/oauth/token`,
        revocation_endpoint: `${origin}/oauth/revoke`,
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code'],
      });
    }
    if (route === 'POST /oauth/device_authorization') {
      if (form.get('client_id') !== 'rz-cli') return json(res, 401, { error: 'invalid_client' });
      return json(res, 200, {
        device_code: 'DEVICECODE_secret_0123456789abcdefghijklmnopqrstu',
        user_code: 'WDJB-MJHT',
        verification_uri: `${origin}/device`,
        verification_uri_complete: `${origin}/device?user_code=WDJB-MJHT`,
        expires_in: options.expiresIn ?? 900,
        interval: options.interval ?? 5,
      });
    }
    if (route === 'POST /oauth/token') {
      polls += 1;
      const outcome = (options.poll ?? (() => 'token'))(polls);
      if (outcome !== 'token') return json(res, 400, { error: outcome, error_description: outcome });
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 7776000, scope: (options.scopes ?? []).join(' '), token_id: 'tok-1' });
    }
    if (route === 'POST /oauth/revoke') {
      revoked.push(form.get('token') ?? '');
      return json(res, 200, {});
    }
    if (route === 'GET /api/me') {
      const presented = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (presented !== token || revoked.includes(presented)) return json(res, 401, { code: 'invalid_token' });
      return json(res, 200, {
        id: 'user-1', username: options.username ?? 'ada', email: 'ada@example.com',
        auth: { type: 'api_token', token_id: 'tok-1', scopes: options.scopes ?? [], expires_at: options.expiresAt === undefined ? '2027-03-08T00:00:00.000Z' : options.expiresAt },
      });
    }
    json(res, 404, { code: 'not_found' });
  }
  return {
    origin,
    seen,
    revoked,
    polls: () => polls,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

export type Stub = Awaited<ReturnType<typeof startStub>>;
