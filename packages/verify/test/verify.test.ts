import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import { request, runCli } from '../../../test/helpers/server-process.js';
import { type Caller, createVerifier, type Verifier, VerifyError } from '../src/index.js';
import { type Account, apiToken, appToken, login, PASSWORD, refusedSoon, type RzAuth, serviceToken, signup, startRzAuth, verifierOf } from './rz-auth.js';

/**
 * The verifier against a real rz-auth process: what each token type resolves to, the refusals, and
 * the cache kept by the event stream (contract §7, "The verifier package").
 */

let rz: RzAuth;
let service: string;
let account: Account;
const verifiers: Verifier[] = [];
beforeAll(async () => {
  rz = await startRzAuth();
  service = await serviceToken(rz.env);
  account = await signup(rz.url);
}, 60_000);
afterEach(async () => {
  for (const v of verifiers.splice(0)) await v.close();
});
afterAll(() => rz.stop());

async function connected(options = {}) {
  const made = await verifierOf(rz, service, options);
  verifiers.push(made.verifier);
  return made;
}

/** The VerifyError `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<VerifyError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VerifyError);
  return error as VerifyError;
}

describe('each token type resolves to its caller', () => {
  it('a user JWT: verified against the JWKS, its session checked; every scope', async () => {
    const { verifier } = await connected();
    const caller = await verifier.verify(`Bearer ${account.jwt}`);
    expect(caller).toMatchObject({ userId: account.userId, tokenType: 'user', scopes: ['*'], username: account.username });
    expect(caller.expiresAt?.getTime()).toBeGreaterThan(Date.now());
    expect(caller.appId).toBeUndefined();
    verifier.requireScopes(caller, 'games:publish', 'anything:else');
  });

  it('an API token with a platform scope', async () => {
    const { verifier } = await connected();
    const token = await apiToken(rz.url, account, ['games:publish']);
    const caller = await verifier.verify(`Bearer ${token.token}`);
    expect(caller).toEqual({ userId: account.userId, tokenType: 'api_token', tokenId: token.id, scopes: ['games:publish'], username: account.username });
    verifier.requireScopes(caller, 'games:publish');
  });

  it('an app token carries its app', async () => {
    const { verifier } = await connected();
    const app = await appToken(rz.url, account, ['games:publish']);
    const caller = await verifier.verify(`Bearer ${app.token}`);
    expect(caller).toMatchObject({ userId: account.userId, tokenType: 'app_token', tokenId: app.tokenId, appId: app.appId, scopes: ['games:publish'] });
  });
});

describe('tokens limited to networks (allowed_cidrs)', () => {
  it('no longer accepted from anywhere: inside the list only, refused outside it and without an address, cached answers included', async () => {
    const { verifier, counted } = await connected();
    const token = await apiToken(rz.url, account, ['games:publish'], ['192.0.2.0/24', '2001:db8::/32']);
    const header = `Bearer ${token.token}`;
    const caller = await verifier.verify(header, '192.0.2.7');
    expect(caller).toMatchObject({ tokenId: token.id, allowedCidrs: ['192.0.2.0/24', '2001:db8::/32'] });
    expect(await verifier.verify(header, '::ffff:192.0.2.8')).toBe(caller);
    expect(await verifier.verify(header, '2001:db8::1')).toBe(caller);
    for (const address of ['198.51.100.1', '2001:db9::1', 'not an address', undefined]) {
      expect((await refusal(verifier.verify(header, address))).code).toBe('invalid_token');
    }
    // One introspection: the refusals came from the cached answer, which still admits its networks.
    expect(counted.count('/api/introspect')).toBe(1);
    expect((await verifier.verify(header, '192.0.2.200')).tokenId).toBe(token.id);
  });

  it('a token without a list is accepted from anywhere, with no address at all', async () => {
    const { verifier } = await connected();
    const token = await apiToken(rz.url, account);
    const caller = await verifier.verify(`Bearer ${token.token}`);
    expect(caller.allowedCidrs).toBeUndefined();
    expect((await verifier.verify(`Bearer ${token.token}`, '198.51.100.1')).tokenId).toBe(token.id);
  });

  it('narrowing the list reaches the cache through the event stream', async () => {
    const { verifier } = await connected();
    const token = await apiToken(rz.url, account, [], ['192.0.2.0/24']);
    const header = `Bearer ${token.token}`;
    await verifier.verify(header, '192.0.2.130');
    const patched = await request(rz.url, 'PATCH', `/api/tokens/${token.id}`, { token: account.jwt, body: { allowed_cidrs: ['192.0.2.0/25'] } });
    expect(patched.status).toBe(200);
    const deadline = Date.now() + 10_000;
    let refused: VerifyError | null = null;
    while (!refused && Date.now() < deadline) {
      refused = await verifier.verify(header, '192.0.2.130').then(() => null, (e: VerifyError) => e);
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(refused?.code).toBe('invalid_token');
    expect((await verifier.verify(header, '192.0.2.1')).allowedCidrs).toEqual(['192.0.2.0/25']);
  });
});

describe('a header gets the answer rz-auth gives it', () => {
  // Two spaces were a 400 from the verifier and a 200 from rz-auth (RFC 6750: 1*SP), `Bearer` alone
  // a 400 and a 401, a tab a 400 and a 401 without an error code.
  it('spelling by spelling, a service using the verifier and GET /api/me agree on the status and WWW-Authenticate', async () => {
    const { verifier } = await connected();
    const api = (await apiToken(rz.url, account)).token;
    const headers = [
      ...['Bearer', 'Bearer ', 'Bearer    ', 'Bearer\t', 'Basic dXNlcjpwYXNz', api, `Bearer${api}`, `Bearerx ${api}`, `Bearer: ${api}`],
      ...[`Bearer ${api}`, `bearer ${api}`, `BEARER ${api}`, `Bearer  ${api}`, `Bearer      ${api}`, ` \tBearer ${api}\t `, `Bearer ${account.jwt}`],
      ...[`Bearer\t${api}`, `Bearer \t${api}`, `Bearer ${api} junk`, `Bearer ${api},`, `Bearer "${api}"`, `Bearer ${api}\u00a0`, `Bearer ${account.jwt}.e30`],
      ...[`Bearer ${'a'.repeat(5000)}`, `Bearer ${' '.repeat(5000)}${api}`, `${' '.repeat(5000)}Bearer ${api}`],
    ];
    for (const header of headers) {
      const res = await fetch(`${rz.url}/api/me`, { headers: { authorization: header } });
      const answer = await verifier.verify(header).then(
        () => ({ status: 200, challenge: null }),
        (e: VerifyError) => ({ status: e.status, challenge: e.wwwAuthenticate }),
      );
      expect(answer, JSON.stringify(header)).toEqual({ status: res.status, challenge: res.headers.get('www-authenticate') });
    }
  });
});

describe('refusals', () => {
  const realm = 'Bearer realm="rz"';
  it.each([
    ['no header', undefined, 'unauthorized', 401, realm],
    ['an empty header', '', 'unauthorized', 401, realm],
    ['another scheme', 'Basic dXNlcjpwYXNz', 'unauthorized', 401, realm],
    ['Bearer without a token', 'Bearer', 'invalid_token', 401, `${realm}, error="invalid_token"`],
    ['a tab between scheme and token: no Bearer credential', 'Bearer\trz_abc', 'unauthorized', 401, realm],
    ['two headers', ['Bearer a', 'Bearer b'], 'invalid_request', 400, `${realm}, error="invalid_request"`],
    ['characters outside b64token', 'Bearer rz_abc!', 'invalid_token', 401, `${realm}, error="invalid_token"`],
    ['a very long value', `Bearer ${'a'.repeat(100_000)}`, 'invalid_token', 401, `${realm}, error="invalid_token"`],
    ['a service credential', 'Bearer rzs_' + 'a'.repeat(49), 'invalid_token', 401, `${realm}, error="invalid_token"`],
    ['an unknown shape', 'Bearer sk_live_abc', 'invalid_token', 401, `${realm}, error="invalid_token"`],
  ] as const)('%s: %s, no request to rz-auth', async (_name, header, code, status, challenge) => {
    const { verifier, counted } = await connected();
    const error = await refusal(verifier.verify(header as string | string[] | undefined));
    expect({ code: error.code, status: error.status, wwwAuthenticate: error.wwwAuthenticate }).toEqual({ code, status, wwwAuthenticate: challenge });
    expect(counted.count('/api/introspect') + counted.count('/.well-known/jwks.json')).toBe(0);
  });

  it('a well-formed unknown token sent again and again, or by many requests at once, cost an introspection each: now one', async () => {
    const { verifier, counted } = await connected();
    const unknown = `Bearer ${generateToken('api')}`;
    const refusals = await Promise.all(Array.from({ length: 20 }, () => refusal(verifier.verify(unknown))));
    expect(refusals.every((e) => e.code === 'invalid_token')).toBe(true);
    for (let i = 0; i < 10; i++) expect((await refusal(verifier.verify(unknown))).code).toBe('invalid_token');
    expect(counted.count('/api/introspect')).toBe(1);
    // A revoked token the client keeps sending: one introspection after the revocation, not one per request.
    const token = await apiToken(rz.url, account);
    await verifier.verify(`Bearer ${token.token}`);
    expect((await request(rz.url, 'DELETE', `/api/tokens/${token.id}`, { token: account.jwt })).status).toBe(204);
    await refusedSoon(verifier, token.token);
    const before = counted.count('/api/introspect');
    for (let i = 0; i < 10; i++) expect((await refusal(verifier.verify(`Bearer ${token.token}`))).code).toBe('invalid_token');
    expect(counted.count('/api/introspect') - before).toBeLessThanOrEqual(1);
    // Requests with the same new token at once share one lookup, and it is cached for all.
    const fresh = await apiToken(rz.url, account);
    const start = counted.count('/api/introspect');
    const callers = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(`Bearer ${fresh.token}`)));
    expect(new Set(callers.map((c) => c.tokenId))).toEqual(new Set([fresh.id]));
    expect(counted.count('/api/introspect') - start).toBe(1);
  });

  it('a mistyped or made-up API or app token cost an introspection each: its checksum is now checked offline', async () => {
    const { verifier, counted } = await connected();
    const token = (await apiToken(rz.url, account)).token;
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    const wrong = [`${token.slice(0, -1)}${last}`, `rza_${token.slice(3)}`, `rz_${'0'.repeat(49)}`, `rza_${'Z'.repeat(49)}`];
    for (const value of wrong) expect((await refusal(verifier.verify(`Bearer ${value}`))).code).toBe('invalid_token');
    expect(counted.count('/api/introspect')).toBe(0);
    // Positive control: the real value still goes out, once.
    expect((await verifier.verify(`Bearer ${token}`)).tokenType).toBe('api_token');
    expect(counted.count('/api/introspect')).toBe(1);
  });

  it('a lower-case scheme is the same scheme', async () => {
    const { verifier } = await connected();
    expect((await verifier.verify(`bearer ${account.jwt}`)).userId).toBe(account.userId);
  });

  it('unknown, forged or tampered tokens are invalid_token, the same error whatever the reason', async () => {
    const { verifier } = await connected();
    const token = await apiToken(rz.url, account);
    const [head, body, signature] = account.jwt.split('.') as [string, string, string];
    // Each change must differ from what it replaces: a token that already ended in the new character stayed valid.
    const other = (text: string, n: number) => `${text.slice(0, -n)}${(text.slice(-n) === 'A'.repeat(n) ? 'B' : 'A').repeat(n)}`;
    const tampered = [`${head}.${other(body, 2)}.${signature}`, `rz_${'0'.repeat(49)}`, `rza_${'0'.repeat(49)}`, other(token.token, 1)];
    const errors = await Promise.all(tampered.map((t) => refusal(verifier.verify(`Bearer ${t}`))));
    for (const error of errors) expect([error.status, error.code, error.wwwAuthenticate]).toEqual([401, 'invalid_token', 'Bearer realm="rz", error="invalid_token"']);
  });

  it('took another spelling of a user JWT (spare bits set in its last character) offline and asked rz-auth each time: now refused without a request', async () => {
    const { verifier, counted } = await connected();
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const [head, body, signature] = account.jwt.split('.') as [string, string, string];
    // An Ed25519 signature is 86 characters: its last one carries four spare bits.
    const last = alphabet.indexOf(signature.slice(-1));
    const spellings = [1, 2, 4, 8].map((bit) => `${head}.${body}.${signature.slice(0, -1)}${alphabet[last ^ bit]}`);
    const before = counted.count('/api/introspect');
    for (const spelling of spellings) {
      const error = await refusal(verifier.verify(`Bearer ${spelling}`));
      expect([error.status, error.code, error.wwwAuthenticate]).toEqual([401, 'invalid_token', 'Bearer realm="rz", error="invalid_token"']);
    }
    expect(counted.count('/api/introspect')).toBe(before);
    // Positive control: the token as rz-auth spelled it is taken.
    expect((await verifier.verify(`Bearer ${account.jwt}`)).userId).toBe(account.userId);
  });

  it('requireScopes: 403 insufficient_scope naming the scopes needed', async () => {
    const { verifier } = await connected({ realm: 'games' });
    const caller = await verifier.verify(`Bearer ${(await apiToken(rz.url, account)).token}`);
    let thrown: unknown;
    try {
      verifier.requireScopes(caller, 'games:publish');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(VerifyError);
    expect(thrown).toMatchObject({ status: 403, code: 'insufficient_scope', wwwAuthenticate: 'Bearer realm="games", error="insufficient_scope", scope="games:publish"' });
  });

  it('refuses bad options at creation, naming them', async () => {
    expect(() => createVerifier({ url: 'not a url', serviceToken: service })).toThrow(/url/);
    expect(() => createVerifier({ url: rz.url, serviceToken: 'rz_nope' })).toThrow(/serviceToken/);
    expect(() => createVerifier({ url: rz.url, serviceToken: service, realm: 'a"b' })).toThrow(/realm/);
    expect(() => createVerifier({ url: rz.url, serviceToken: service, cacheMaxEntries: 0 })).toThrow(/cacheMaxEntries/);
  });

  it('took durations past 2^31-1 ms (Node fired the idle timer after 1 ms, AbortSignal.timeout threw) and options of the wrong type: now refused, naming them', () => {
    const bad = { timeoutMs: 2 ** 32, streamIdleTimeoutMs: 2 ** 31, reconnectMaxMs: 2 ** 31, cacheMaxAgeMs: 2 ** 40, jwksCooldownMs: 1e12, reconnectMinMs: 2 ** 31 };
    for (const [name, value] of Object.entries(bad)) {
      expect(() => createVerifier({ url: rz.url, serviceToken: service, [name]: value }), name).toThrow(new TypeError(`createVerifier: ${name} must be a positive integer up to 2147483647`));
    }
    const fetch = 'globalThis.fetch' as unknown as typeof globalThis.fetch;
    expect(() => createVerifier({ url: rz.url, serviceToken: service, fetch })).toThrow(new TypeError('createVerifier: fetch must be a function'));
    const onStreamError = console as unknown as () => void;
    expect(() => createVerifier({ url: rz.url, serviceToken: service, onStreamError })).toThrow(new TypeError('createVerifier: onStreamError must be a function'));
  });
});

describe('the cache, kept correct by the event stream', () => {
  const verifyRefused = async (verifier: Verifier, token: string) => {
    for (let i = 0; i < 3; i++) expect((await refusal(verifier.verify(`Bearer ${token}`))).code).toBe('invalid_token');
  };
  const verifyTwice = async (verifier: Verifier, token: string): Promise<Caller> => {
    await verifier.verify(`Bearer ${token}`);
    return verifier.verify(`Bearer ${token}`);
  };

  it('an opaque token is introspected once, then answered from the cache; its revocation is kept as a refusal', async () => {
    const { verifier, counted } = await connected();
    const token = await apiToken(rz.url, account);
    await verifyTwice(verifier, token.token);
    expect(counted.count('/api/introspect')).toBe(1);
    expect((await request(rz.url, 'DELETE', `/api/tokens/${token.id}`, { token: account.jwt })).status).toBe(204);
    expect((await refusedSoon(verifier, token.token)).code).toBe('invalid_token');
    // The revocation is final: the refusal is kept and costs rz-auth nothing, however often it is tried.
    await verifyRefused(verifier, token.token);
    expect(counted.count('/api/introspect')).toBe(1);
  });

  it('a user JWT: the JWKS fetched once, the session checked once, a logout drops it', async () => {
    const { verifier, counted } = await connected();
    const user = await signup(rz.url);
    const other = await apiToken(rz.url, user);
    await verifyTwice(verifier, user.jwt);
    await verifyTwice(verifier, other.token);
    expect([counted.count('/.well-known/jwks.json'), counted.count('/api/introspect')]).toEqual([1, 2]);
    expect((await request(rz.url, 'POST', '/api/auth/logout', { token: user.jwt })).status).toBe(204);
    expect((await refusedSoon(verifier, user.jwt)).code).toBe('invalid_token');
    // The API token of the same user is untouched by the logout, and still cached.
    await verifier.verify(`Bearer ${other.token}`);
    expect(counted.count('/api/introspect')).toBe(2);
  });

  it('a deleted user (the CLI): every answer about them becomes a refusal', async () => {
    const { verifier, counted } = await connected();
    const doomed = await signup(rz.url);
    const token = await apiToken(rz.url, doomed);
    await verifyTwice(verifier, doomed.jwt);
    await verifyTwice(verifier, token.token);
    await verifyTwice(verifier, (await apiToken(rz.url, account)).token);
    expect(verifier.cacheSize).toBe(3);
    expect((await runCli(['users', 'delete', doomed.userId], rz.env)).code).toBe(0);
    for (const t of [doomed.jwt, token.token]) expect((await refusedSoon(verifier, t)).code).toBe('invalid_token');
    expect(counted.count('/api/introspect')).toBe(3);
  });

  it('the account routes: ending the other sessions, then deleting the account, refuse their tokens', async () => {
    const { verifier } = await connected();
    const member = await signup(rz.url);
    const second = await login(rz.url, member);
    const token = await apiToken(rz.url, member);
    for (const t of [member.jwt, second, token.token]) await verifyTwice(verifier, t);
    expect((await request(rz.url, 'DELETE', '/api/auth/sessions', { token: second })).status).toBe(204);
    expect((await refusedSoon(verifier, member.jwt)).code).toBe('invalid_token');
    expect((await verifier.verify(`Bearer ${second}`)).tokenType).toBe('user');
    expect((await request(rz.url, 'DELETE', '/api/me', { token: second, body: { password: PASSWORD } })).status).toBe(204);
    for (const t of [second, token.token]) expect((await refusedSoon(verifier, t)).code).toBe('invalid_token');
  });

  it('a deleted app: its tokens are refused', async () => {
    const { verifier } = await connected();
    const app = await appToken(rz.url, account);
    await verifyTwice(verifier, app.token);
    expect((await request(rz.url, 'DELETE', `/api/apps/${app.appId}`, { token: account.jwt })).status).toBe(204);
    expect((await refusedSoon(verifier, app.token)).code).toBe('invalid_token');
  });
});
