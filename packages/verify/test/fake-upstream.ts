import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createVerifier, type Verifier, type VerifierOptions, type VerifyError } from '../src/index.js';

/**
 * Local servers that play rz-auth, or an origin it should never reach, answering what a test
 * needs to break: redirects, odd event streams, odd introspection answers. Each request is kept.
 */

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Fake {
  readonly url: string;
  /** The requests received, in order. */
  readonly requests: IncomingMessage[];
  /** How many requests were for `path`. */
  count(path: string): number;
  close(): Promise<void>;
}

/** A server answering each path with its handler, 404 elsewhere; close() ends open streams too. */
export async function fake(handlers: Record<string, Handler>): Promise<Fake> {
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req);
    const handler = handlers[req.url ?? ''];
    if (!handler) return void req.resume().on('end', () => res.writeHead(404).end());
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    count: (path) => requests.filter((req) => req.url === path).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A service credential of the right shape; the fakes never check it. */
export const SERVICE = `rzs_${'a'.repeat(49)}`;

const made: Array<() => Promise<void>> = [];

/** Closes every fake and verifier made through {@link served} and {@link verifierOf}, newest first: call it after each test. */
export async function closeAll(): Promise<void> {
  for (const close of made.splice(0).reverse()) await close();
}

/** {@link fake}, closed by {@link closeAll}. */
export async function served(handlers: Record<string, Handler>): Promise<Fake> {
  const server = await fake(handlers);
  made.push(() => server.close());
  return server;
}

/** A verifier of `url` that reconnects its stream quickly, closed by {@link closeAll}. */
export function verifierOf(url: string, options: Partial<VerifierOptions> = {}): Verifier {
  const verifier = createVerifier({ url, serviceToken: SERVICE, reconnectMinMs: 10, reconnectMaxMs: 50, ...options });
  made.push(() => verifier.close());
  return verifier;
}

/** Answers `body` as JSON with a 200, once the request's body has been read. */
export const json =
  (body: () => unknown): Handler =>
  (req, res) =>
    void req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body())));

/** Answers with a redirect `status` to `location`. */
export const redirect =
  (status: number, location: string): Handler =>
  (req, res) =>
    void req.resume().on('end', () => res.writeHead(status, { location }).end());

/** An event stream as rz-auth opens one: its first comment at once, then kept open. */
export const openStream: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.write(': subscribed\n\n');
};

/** A key pair and a signer of user JWTs in rz-auth's shape, for upstreams that serve its JWKS. */
export async function signer(kid: string): Promise<{ jwk: JWK; sign: (claims: { sub: string; sid: string; exp: number }) => Promise<string> }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return {
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' },
    sign: ({ sub, sid, exp }) =>
      new SignJWT({ sid })
        .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' })
        .setIssuer('rz-auth')
        .setAudience('rz-api')
        .setSubject(sub)
        .setJti(`j-${sid}`)
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(privateKey),
  };
}

/** What a verify() came to: 'accepted', or the refusal's code. */
export const outcome = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'accepted',
    (error: unknown) => (error as VerifyError).code,
  );
