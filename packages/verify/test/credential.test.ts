import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { VerifyError } from '../src/index.js';
import { closeAll, type Handler, json, openStream, outcome, served, signer, verifierOf } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * A service whose own credential rz-auth refuses (revoked, mistyped, not a service credential) is
 * told so: its own code, logged once, never "rz-auth is unreachable", which sends an operator
 * looking at the network.
 */

afterEach(closeAll);

/** Answers `status` with a problem body, once the request's body has been read. */
const refuse =
  (status: number): Handler =>
  (req, res) =>
    void req.resume().on('end', () => res.writeHead(status, { 'content-type': 'application/problem+json' }).end('{"code":"invalid_token"}'));

const active = { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' };

/** A logger that keeps what it is told. */
function recording() {
  const lines: string[] = [];
  return { lines, logger: { error: (message: string) => void lines.push(message) } };
}

describe('a refused service credential', () => {
  it.each([401, 403])('an introspection answered %i was reported as "rz-auth is unreachable": now 503 service_credential_refused, logged once', async (status) => {
    const upstream = await served({ '/api/introspect': refuse(status) });
    const { lines, logger } = recording();
    const verifier = verifierOf(upstream.url, { logger });
    for (let i = 0; i < 5; i++) {
      const error = await verifier.verify(`Bearer ${generateToken('api')}`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VerifyError);
      const { status: answered, code, wwwAuthenticate, message } = error as VerifyError;
      expect({ answered, code, wwwAuthenticate }).toEqual({ answered: 503, code: 'service_credential_refused', wwwAuthenticate: undefined });
      expect(message).not.toMatch(/unreachable/);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`POST /api/introspect answered ${status}`);
    expect(lines[0]).not.toContain('rzs_');
  });

  it('a key set answered 401 was reported as "rz-auth is unreachable": now service_credential_refused', async () => {
    const keys = await signer('k1');
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: Math.floor(Date.now() / 1000) + 600 });
    const upstream = await served({ '/.well-known/jwks.json': refuse(401) });
    const { lines, logger } = recording();
    expect(await outcome(verifierOf(upstream.url, { logger }).verify(`Bearer ${jwt}`))).toBe('service_credential_refused');
    expect(lines[0]).toContain('GET /.well-known/jwks.json answered 401');
  });

  it('an event stream answered 401 was told to onStreamError as any failure: now a VerifyError service_credential_refused, logged once however often it is retried', async () => {
    const upstream = await served({ '/api/events': refuse(401) });
    const { lines, logger } = recording();
    const errors: unknown[] = [];
    verifierOf(upstream.url, { logger, onStreamError: (error) => errors.push(error) });
    await until(() => errors.length >= 3, 'the stream was refused three times');
    for (const error of errors) expect((error as VerifyError).code).toBe('service_credential_refused');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('GET /api/events answered 401');
  });

  it('is logged again when it is refused after having been accepted in between', async () => {
    let refusing = true;
    const upstream = await served({ '/api/introspect': (req, res) => (refusing ? refuse(401)(req, res) : json(() => active)(req, res)) });
    const { lines, logger } = recording();
    const verifier = verifierOf(upstream.url, { logger });
    const token = `Bearer ${generateToken('api')}`;
    expect(await outcome(verifier.verify(token))).toBe('service_credential_refused');
    refusing = false;
    expect(await outcome(verifier.verify(token))).toBe('accepted');
    refusing = true;
    expect(await outcome(verifier.verify(token))).toBe('service_credential_refused');
    expect(await outcome(verifier.verify(token))).toBe('service_credential_refused');
    expect(lines).toHaveLength(2);
  });

  it('an outage is still unavailable, not a refused credential, and logs nothing', async () => {
    const upstream = await served({ '/api/introspect': refuse(500), '/api/events': openStream });
    const { lines, logger } = recording();
    expect(await outcome(verifierOf(upstream.url, { logger }).verify(`Bearer ${generateToken('api')}`))).toBe('unavailable');
    expect(lines).toEqual([]);
  });

  it('a logger without an error method is refused at creation', () => {
    expect(() => verifierOf('http://127.0.0.1:9', { logger: {} as never })).toThrow(/logger/);
  });
});
