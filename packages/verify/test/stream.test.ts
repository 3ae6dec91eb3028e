import { join } from 'node:path';
import { generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSqlite } from '../../../src/db/database.js';
import { generateToken } from '../../../src/lib/token-format.js';
import { openEvents } from '../../../test/helpers/event-stream.js';
import { request, runCli } from '../../../test/helpers/server-process.js';
import { createVerifier, type Verifier, VerifyError } from '../src/index.js';
import { apiToken, countingFetch, login, type RzAuth, serviceToken, signup, startRzAuth, until, verifierOf } from './rz-auth.js';

/**
 * What the verifier does when its event stream cannot be trusted (down, reset) or rz-auth cannot
 * be reached, and when keys change: each against a real rz-auth process of its own.
 */

const cleanUps: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const clean of cleanUps.splice(0).reverse()) await clean();
});

async function setUp(env: Record<string, string> = {}) {
  const rz = await startRzAuth(env);
  cleanUps.push(() => rz.stop());
  const service = await serviceToken(rz.env);
  return { rz, service, account: await signup(rz.url) };
}

async function connected(rz: RzAuth, service: string, options = {}) {
  const made = await verifierOf(rz, service, options);
  cleanUps.push(() => made.verifier.close());
  return made;
}

async function refusal(promise: Promise<unknown>): Promise<VerifyError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VerifyError);
  return error as VerifyError;
}

const verifyTimes = async (verifier: Verifier, token: string, times: number) => {
  for (let i = 0; i < times; i++) await verifier.verify(`Bearer ${token}`);
};

describe('while the event stream is down, nothing is cached', () => {
  it('every opaque token is introspected and every JWT session rechecked; a revocation counts at once; caching resumes with the stream', async () => {
    // One stream per credential: a stream held by someone else keeps the verifier's refused (429).
    const { rz, service, account } = await setUp({ EVENTS_STREAMS_PER_CREDENTIAL: '1' });
    const holder = await openEvents(rz.url, service);
    expect(holder.status).toBe(200);
    const errors: unknown[] = [];
    const counted = countingFetch();
    const verifier = createVerifier({ url: rz.url, serviceToken: service, fetch: counted.fetch, reconnectMinMs: 20, reconnectMaxMs: 100, onStreamError: (e) => errors.push(e) });
    cleanUps.push(() => verifier.close());
    await until(() => errors.length > 0, 'the stream was refused');
    expect(String(errors[0])).toContain('429');

    const token = await apiToken(rz.url, account);
    await verifyTimes(verifier, token.token, 3);
    await verifyTimes(verifier, account.jwt, 3);
    expect(verifier.streaming).toBe(false);
    expect(verifier.cacheSize).toBe(0);
    expect(counted.count('/api/introspect')).toBe(6);
    expect(counted.count('/.well-known/jwks.json')).toBe(1);

    expect((await request(rz.url, 'DELETE', `/api/tokens/${token.id}`, { token: account.jwt })).status).toBe(204);
    expect((await refusal(verifier.verify(`Bearer ${token.token}`))).code).toBe('invalid_token');
    expect((await request(rz.url, 'POST', '/api/auth/logout', { token: account.jwt })).status).toBe(204);
    expect((await refusal(verifier.verify(`Bearer ${account.jwt}`))).code).toBe('invalid_token');

    holder.close();
    await until(() => verifier.streaming, 'the stream came up once the other was gone');
    const other = await apiToken(rz.url, { ...account, jwt: await login(rz.url, account) });
    const before = counted.count('/api/introspect');
    await verifyTimes(verifier, other.token, 3);
    expect(counted.count('/api/introspect') - before).toBe(1);
  });
});

describe('reset', () => {
  it('an event: reset drops every cached answer', async () => {
    const { rz, service, account } = await setUp();
    const { verifier, counted } = await connected(rz, service);
    const token = await apiToken(rz.url, account);
    await verifyTimes(verifier, token.token, 2);
    await verifyTimes(verifier, account.jwt, 2);
    expect(verifier.cacheSize).toBe(2);
    // A change with no event (as an older rz-auth records one) reaches streams as a reset.
    const Sqlite = loadSqlite();
    const db = new Sqlite(join(rz.dir, 'rz.db'));
    db.prepare("insert into changes (kind, ref, created_at, event) values ('token', 'x', ?, null)").run(new Date().toISOString());
    db.close();
    await until(() => verifier.cacheSize === 0, 'the reset dropped the cache');
    expect(verifier.streaming).toBe(true);
    const before = counted.count('/api/introspect');
    await verifyTimes(verifier, token.token, 2);
    expect(counted.count('/api/introspect') - before).toBe(1);
  });
});

describe('fail closed', () => {
  it('with rz-auth gone, every token is refused with 503 unavailable, cached or not, and none is accepted', async () => {
    const { rz, service, account } = await setUp();
    const { verifier } = await connected(rz, service, { timeoutMs: 1000 });
    const token = await apiToken(rz.url, account);
    const fresh = await apiToken(rz.url, account);
    await verifyTimes(verifier, token.token, 2);
    await verifyTimes(verifier, account.jwt, 2);
    await rz.server.stop('SIGKILL');
    await until(() => !verifier.streaming, 'the stream went down');
    for (const t of [token.token, fresh.token, account.jwt]) {
      const error = await refusal(verifier.verify(`Bearer ${t}`));
      expect({ status: error.status, code: error.code, challenge: error.wwwAuthenticate }).toEqual({ status: 503, code: 'unavailable', challenge: undefined });
      expect(error.message).toMatch(/rz-auth is unreachable/);
    }
  });

  it('a verifier that never reached rz-auth refuses with 503 too; a malformed token is still 401', async () => {
    const verifier = createVerifier({ url: 'http://127.0.0.1:9', serviceToken: `rzs_${'a'.repeat(49)}`, timeoutMs: 1000 });
    cleanUps.push(() => verifier.close());
    expect((await refusal(verifier.verify(`Bearer ${generateToken('api')}`))).status).toBe(503);
    expect((await refusal(verifier.verify('Bearer not!valid'))).status).toBe(401);
  });

  it('a revoked service credential was reported as "rz-auth is unreachable": now 503 service_credential_refused, logged once, never an accepted token', async () => {
    const { rz, account } = await setUp();
    const created = JSON.parse((await runCli(['services', 'create', 'doomed'], rz.env)).stdout) as { id: string; token: string };
    const logged: string[] = [];
    const { verifier } = await connected(rz, created.token, { logger: { error: (line: string) => logged.push(line) } });
    const token = await apiToken(rz.url, account);
    await verifyTimes(verifier, token.token, 2);
    expect((await runCli(['services', 'revoke', created.id], rz.env)).code).toBe(0);
    await until(() => !verifier.streaming, 'the stream of the revoked credential ended');
    for (let i = 0; i < 3; i++) {
      const error = await refusal(verifier.verify(`Bearer ${token.token}`));
      expect([error.status, error.code]).toEqual([503, 'service_credential_refused']);
    }
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/refused this service's credential \((POST \/api\/introspect|GET \/api\/events) answered 401\)/);
  });
});

describe('the JWKS', () => {
  it('is fetched again for an unknown kid, at most once per cooldown, never for a known one', async () => {
    const { rz, service, account } = await setUp();
    const cooldownMs = 2000;
    const { verifier, counted } = await connected(rz, service, { jwksCooldownMs: cooldownMs });
    // What takes time (logins hash a password, a key pair) is done before the cooldown starts, so
    // only verifications run within it, however busy the machine.
    const others = [await login(rz.url, account), await login(rz.url, account), await login(rz.url, account)];
    const { privateKey } = await generateKeyPair('EdDSA');
    await verifier.verify(`Bearer ${account.jwt}`);
    const fetchedAt = Date.now();
    for (const jwt of others) await verifier.verify(`Bearer ${jwt}`);
    expect(counted.count('/.well-known/jwks.json')).toBe(1);

    const forged = (kid: string) =>
      new SignJWT({ sid: '0b6f3c1e-2a4d-4c8e-9f10-5a7b3d2e1c90' })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid })
        .setIssuer('rz-auth')
        .setAudience('rz-api')
        .setSubject(account.userId)
        .setJti('5a7b3d2e-1c90-4c8e-9f10-0b6f3c1e2a4d')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    // Within the cooldown of the first fetch, an unknown kid is refused without a fetch.
    expect((await refusal(verifier.verify(`Bearer ${await forged('unknown-1')}`))).code).toBe('invalid_token');
    expect(Date.now() - fetchedAt).toBeLessThan(cooldownMs);
    expect(counted.count('/.well-known/jwks.json')).toBe(1);
    await until(() => Date.now() - fetchedAt > cooldownMs + 100, 'the cooldown passed');
    expect((await refusal(verifier.verify(`Bearer ${await forged('unknown-2')}`))).code).toBe('invalid_token');
    expect(counted.count('/.well-known/jwks.json')).toBe(2);
    for (const kid of ['unknown-3', 'unknown-4', 'unknown-5']) await refusal(verifier.verify(`Bearer ${await forged(kid)}`));
    expect(counted.count('/.well-known/jwks.json')).toBe(2);
    expect(counted.count('/api/introspect')).toBe(4);
  });

  it('keys.changed: the JWKS is fetched again and JWT answers dropped; tokens of the new key verify without another fetch', async () => {
    const { rz, service, account } = await setUp();
    const { verifier, counted } = await connected(rz, service);
    const token = await apiToken(rz.url, account);
    await verifyTimes(verifier, account.jwt, 2);
    await verifyTimes(verifier, token.token, 2);
    expect(verifier.cacheSize).toBe(2);
    expect((await runCli(['keys', 'rotate'], rz.env)).code).toBe(0);
    await until(() => counted.count('/.well-known/jwks.json') === 2 && verifier.cacheSize === 1, 'the rotation was heard');
    const fresh = await login(rz.url, account);
    expect(fresh.split('.')[0]).not.toBe(account.jwt.split('.')[0]);
    expect((await verifier.verify(`Bearer ${fresh}`)).tokenType).toBe('user');
    expect((await verifier.verify(`Bearer ${account.jwt}`)).tokenType).toBe('user');
    expect(counted.count('/.well-known/jwks.json')).toBe(2);
  });
});
