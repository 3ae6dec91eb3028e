import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/tokens/format.js';
import type { VerifyError } from '../src/index.js';
import { createVerifier } from '../src/index.js';

/**
 * What the verifier reads of answers that are not rz-auth's: an upstream that the configured URL
 * reaches by mistake (a proxy, another service) must not make a service buffer any amount of it.
 * A local server plays the upstream; its event stream is absent, so every token is looked up.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const SERVICE = `rzs_${'a'.repeat(49)}`;
const PADDING = 'x'.repeat(2 * 1024 * 1024);

/** An upstream answering each path with `answers[path]` as JSON (and 404 elsewhere, the event stream included). */
async function upstream(answers: Record<string, () => unknown>): Promise<string> {
  const server = createServer((req, res) => {
    const answer = answers[req.url ?? ''];
    req.resume();
    if (!answer) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer()));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function outcome(url: string, header: string): Promise<string> {
  const verifier = createVerifier({ url, serviceToken: SERVICE, timeoutMs: 5000 });
  try {
    const caller = await verifier.verify(header);
    return `accepted ${caller.tokenType}`;
  } catch (error) {
    return (error as VerifyError).code;
  } finally {
    await verifier.close();
  }
}

const active = { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' };

describe('answers past 64 KiB are refused, not buffered', () => {
  it('an introspection answer of 2 MiB was read whole and taken as a yes: now 503 unavailable', async () => {
    const small = await upstream({ '/api/introspect': () => active });
    expect(await outcome(small, `Bearer ${generateToken('api')}`)).toBe('accepted api_token');
    const huge = await upstream({ '/api/introspect': () => ({ ...active, padding: PADDING }) });
    expect(await outcome(huge, `Bearer ${generateToken('api')}`)).toBe('unavailable');
  });

  it('a key set of 2 MiB was read whole and used: now 503 unavailable', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'EdDSA', use: 'sig' };
    const jwt = await new SignJWT({ sid: 's1' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'JWT' })
      .setIssuer('rz-auth')
      .setAudience('rz-api')
      .setSubject('u1')
      .setJti('j1')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey);
    // The user token's session is checked by introspection while the stream is down.
    const session = () => ({ active: true, token_type: 'user', sub: 'u1', jti: 's1', scope: '*' });
    const small = await upstream({ '/.well-known/jwks.json': () => ({ keys: [jwk] }), '/api/introspect': session });
    expect(await outcome(small, `Bearer ${jwt}`)).toBe('accepted user');
    const huge = await upstream({ '/.well-known/jwks.json': () => ({ keys: [jwk], padding: PADDING }), '/api/introspect': session });
    expect(await outcome(huge, `Bearer ${jwt}`)).toBe('unavailable');
  });
});
