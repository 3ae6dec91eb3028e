import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, FlattenedSign, GeneralSign, type JSONWebKeySet, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalidToken, json, login, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { assemble, b64url, comparable, type Json, respellings, signEd25519, signHs256, signInput, split } from '../helpers/jwt-craft.js';

/**
 * Family 3 of the security bar: forged, tampered and stale user tokens. Every rejection must be the
 * same 401 invalid_token, byte for byte apart from the request id, so no answer says which check
 * failed. Hand-signed tokens use the server's real private key wherever the point is that only one
 * field differs; a positive control proves such a token is otherwise accepted.
 */

const me = (t: TestApp, token: string) => t.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } });
const sidOf = (jwt: string) => String(split(jwt).payload.sid);
const jwksOf = async (t: TestApp) => (await t.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;

/** Asserts invalid_token, identical to the answer for a string that is not a token at all. */
async function expectRejected(t: TestApp, token: string): Promise<void> {
  const reference = comparable(await me(t, 'not-a-token'));
  const res = await me(t, token);
  expectInvalidToken(res);
  expect(comparable(res)).toEqual(reference);
}

describe('forged and tampered user tokens', () => {
  const clock = new TestClock();
  let t: TestApp;
  let victim: TestUser;
  let other: TestUser;
  let kid: string;
  const attacker = generateKeyPairSync('ed25519');
  const attackerJwk = attacker.publicKey.export({ format: 'jwk' }) as Json;
  const attackerKid = randomUUID();

  beforeAll(async () => {
    t = await startTestApp({ clock });
    victim = await signup(t);
    other = await signup(t);
    kid = t.services.keys.signingKey().kid;
  });
  afterAll(() => t.close());

  const realKey = () => t.services.keys.signingKey().key;
  const header = (overrides: Json = {}): Json => ({ alg: 'EdDSA', typ: 'JWT', kid, ...overrides });
  const joseHeader = () => ({ alg: 'EdDSA', typ: 'JWT', kid });
  /** The victim's full, valid claim set for their live session. */
  const claims = (overrides: Json = {}): Json => {
    const iat = Math.floor(clock.now() / 1000);
    return { iss: 'rz-auth', aud: 'rz-api', sub: victim.id, sid: sidOf(victim.jwt), jti: randomUUID(), iat, exp: iat + 3600, ...overrides };
  };
  const realSigned = (h: Json = {}, c: Json = {}) => signEd25519(header(h), claims(c), realKey());
  const victimWith = (payload: Json) => assemble(split(victim.jwt).header, { ...split(victim.jwt).payload, ...payload }, split(victim.jwt).signature);
  const publicJwk = async () => (await jwksOf(t)).keys[0] as Json;

  describe('positive controls: the building blocks below are sound', () => {
    it('a token hand-signed with the real key and the full claim set is accepted', async () => {
      const res = await me(t, realSigned());
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: victim.id, auth: { type: 'user', token_id: sidOf(victim.jwt) } });
    });
    it('the same claims signed with jose SignJWT are accepted', async () => {
      const token = await new SignJWT(claims()).setProtectedHeader(joseHeader()).sign(realKey());
      expect((await me(t, token)).statusCode).toBe(200);
    });
    it('re-assembling the victim token from its decoded parts keeps it valid', async () => {
      expect((await me(t, victimWith({}))).statusCode).toBe(200);
    });
  });

  const NONE_CASINGS = ['none', 'None', 'NONE', 'nOnE'];
  const noneCases = NONE_CASINGS.flatMap((alg) => [
    [`alg "${alg}", empty signature`, () => assemble(header({ alg }), claims(), '')],
    [`alg "${alg}", junk signature`, () => assemble(header({ alg }), claims(), b64url('signature'))],
    [`alg "${alg}", the victim's real signature`, () => assemble(header({ alg }), claims(), split(victim.jwt).signature)],
    [`alg "${alg}" without kid or typ`, () => assemble({ alg }, claims(), '')],
  ] as const);

  it.each(noneCases)('unsigned: %s', async (_name, build) => expectRejected(t, build()));

  it.each([
    ['signature stripped, trailing dot kept', () => `${split(victim.jwt).signingInput}.`],
    ['signature stripped, two segments', () => split(victim.jwt).signingInput],
    ["signature spliced from another user's valid token", () => `${split(victim.jwt).signingInput}.${split(other.jwt).signature}`],
    ['signature of one token, claims of a newer one', () => `${split(realSigned()).signingInput}.${split(victim.jwt).signature}`],
    ['signature truncated by one character', () => victim.jwt.slice(0, -1)],
    ['four segments', () => `${victim.jwt}.${split(victim.jwt).signature}`],
  ])('signature: %s', async (_name, build) => expectRejected(t, build()));

  // Regression: the last character of a base64url segment can carry bits no byte uses, and
  // decoders ignore them, so each user token had sixteen strings that verified (its signature is
  // 86 characters: 4 spare bits). A deny-list of token strings must be able to rely on one spelling.
  describe('one token, one spelling: non-canonical base64url is rejected', () => {
    /** A token signed with the real key whose three segments each end with spare bits (lengths not 0 mod 4). */
    const unaligned = () => {
      for (let pad = 0; ; pad++) {
        const token = realSigned({ x: 'p'.repeat(pad % 3) }, { jti: `${randomUUID()}${'j'.repeat(Math.floor(pad / 3))}` });
        if (token.split('.').every((segment) => segment.length % 4 !== 0)) return token;
      }
    };
    const respelled = (token: string, index: number): string[] => {
      const segments = token.split('.');
      return respellings(segments[index] ?? '').map((spelling) => segments.with(index, spelling).join('.'));
    };

    it('positive control: the canonical spelling is accepted and every respelling decodes to the same bytes', async () => {
      const token = unaligned();
      expect((await me(t, token)).statusCode).toBe(200);
      for (const [index, segment] of token.split('.').entries()) {
        for (const variant of respelled(token, index)) {
          expect(Buffer.from(variant.split('.')[index] ?? '', 'base64url')).toEqual(Buffer.from(segment, 'base64url'));
        }
      }
      expect(respelled(victim.jwt, 2)).toHaveLength(15);
    });

    it("the victim's own token: all fifteen other spellings of its signature", async () => {
      for (const variant of respelled(victim.jwt, 2)) await expectRejected(t, variant);
      expect((await me(t, victim.jwt)).statusCode).toBe(200);
    });

    it('signature respelled', async () => {
      const variants = respelled(unaligned(), 2);
      expect(variants).toHaveLength(15);
      for (const variant of variants) await expectRejected(t, variant);
    });

    it.each([
      ['header', 0],
      ['payload', 1],
    ])('%s respelled, then validly signed with the real key over that spelling', async (_name, index) => {
      const variants = respelled(split(unaligned()).signingInput, index);
      expect(variants.length).toBeGreaterThan(0);
      for (const variant of variants) await expectRejected(t, signInput(variant, realKey()));
    });
  });

  it.each([
    ["sub changed to another user's id", () => victimWith({ sub: other.id })],
    ['exp extended by a day', () => victimWith({ exp: Number(split(victim.jwt).payload.exp) + 86_400 })],
    ["sid changed to another user's session", () => victimWith({ sid: sidOf(other.jwt) })],
    ['sid changed to a random id', () => victimWith({ sid: randomUUID() })],
    ['aud widened to an array', () => victimWith({ aud: ['rz-api', 'other-api'] })],
    ['header kid removed', () => assemble({ alg: 'EdDSA', typ: 'JWT' }, split(victim.jwt).payload, split(victim.jwt).signature)],
    ['header alg renamed to Ed25519', () => assemble(header({ alg: 'Ed25519' }), split(victim.jwt).payload, split(victim.jwt).signature)],
  ])('tampered, original signature kept: %s', async (_name, build) => expectRejected(t, build()));

  it("validly signed, but sub of another user on the victim's session", async () => {
    await expectRejected(t, realSigned({}, { sub: other.id }));
  });

  it.each([
    ['raw public key bytes', async () => Buffer.from(String((await publicJwk()).x), 'base64url')],
    ['the JWKS x value as text', async () => String((await publicJwk()).x)],
    ['the JWK as JSON text', async () => JSON.stringify(await publicJwk())],
    ['the SPKI PEM', async () => createPublicKey({ key: await publicJwk(), format: 'jwk' }).export({ type: 'spki', format: 'pem' })],
    ['the SPKI DER', async () => createPublicKey({ key: await publicJwk(), format: 'jwk' }).export({ type: 'spki', format: 'der' })],
  ])('key confusion: HS256 keyed with %s', async (_name, secret) => {
    const key = await secret();
    for (const alg of ['HS256', 'hs256']) await expectRejected(t, signHs256(header({ alg }), claims(), key));
  });

  it.each([
    ['embedded jwk, no kid', () => signEd25519({ alg: 'EdDSA', typ: 'JWT', jwk: attackerJwk }, claims(), attacker.privateKey)],
    ['embedded jwk with our real kid', () => signEd25519(header({ jwk: attackerJwk }), claims(), attacker.privateKey)],
    ['embedded jwk with its own matching kid', () => signEd25519(header({ kid: attackerKid, jwk: { ...attackerJwk, kid: attackerKid } }), claims(), attacker.privateKey)],
    ['jku to an attacker JWKS, attacker kid', () => signEd25519(header({ kid: attackerKid, jku: 'https://attacker.example/jwks.json' }), claims(), attacker.privateKey)],
    ['jku to an attacker JWKS, our real kid', () => signEd25519(header({ jku: 'https://attacker.example/jwks.json' }), claims(), attacker.privateKey)],
    ['x5u to an attacker certificate', () => signEd25519(header({ x5u: 'https://attacker.example/cert.pem' }), claims(), attacker.privateKey)],
    ['attacker key, no key hints at all', () => signEd25519(header(), claims(), attacker.privateKey)],
  ])('attacker key: %s', async (_name, build) => expectRejected(t, build()));

  it.each([
    ['unknown uuid', randomUUID()],
    ['path traversal', '../../etc/passwd'],
    ['__proto__', '__proto__'],
    ['constructor', 'constructor'],
    ['toString', 'toString'],
    ['SQL-ish', "' OR '1'='1' --"],
    ['SQL drop', "x'; DROP TABLE signing_keys; --"],
    ['very long (1000)', 'k'.repeat(1000)],
    ['longer than any token we accept', 'k'.repeat(3000)],
    ['a number', 12345],
    ['null', null],
    ['an array holding the real kid', ['<real>']],
    ['an object', { $ne: null }],
  ])('hostile kid, signed with the real key: %s', async (_name, value) => {
    const hostile = Array.isArray(value) ? [kid] : value;
    await expectRejected(t, realSigned({ kid: hostile }));
  });

  it('the key ring survives the hostile kids: the victim token still works', async () => {
    expect((await me(t, victim.jwt)).statusCode).toBe(200);
    expect((await jwksOf(t)).keys.map((k) => k.kid)).toEqual([kid]);
  });

  it.each([
    ['crit with an unknown extension', { crit: ['x-rz-unknown'], 'x-rz-unknown': true }],
    ['crit naming an absent parameter', { crit: ['x-rz-absent'] }],
    ['b64: false (unencoded payload)', { b64: false, crit: ['b64'] }],
    ['no typ', { typ: undefined }],
  ])('header, signed with the real key: %s', async (_name, extra) => expectRejected(t, realSigned(extra)));

  const now = () => Math.floor(clock.now() / 1000);
  it.each([
    ['wrong iss', { iss: 'evil-issuer' }],
    ['wrong aud', { aud: 'other-api' }],
    ['aud array without ours', { aud: ['other-api'] }],
    ['sub not a uuid', { sub: 'admin' }],
    ['sub a number', { sub: 1 }],
    ['sid of no session', { sid: randomUUID() }],
    ['nbf an hour ahead (not yet valid)', () => ({ nbf: now() + 3600 })],
    ['iat an hour ahead', () => ({ iat: now() + 3600, exp: now() + 7200 })],
    ['exp a second ago', () => ({ exp: now() - 1 })],
    ['exp exactly now', () => ({ exp: now() })],
    ['exp as a string', () => ({ exp: String(now() + 3600) })],
  ])('claims, signed with the real key: %s', async (_name, overrides) => {
    await expectRejected(t, realSigned({}, typeof overrides === 'function' ? overrides() : overrides));
  });

  // Regression: a validly signed exp of 1e300 made GET /api/me answer 500 (no date can be written for
  // it), and the second request, answered from the caches, ended the process with an unhandled rejection.
  it.each([
    ['exp 1e300', () => ({ exp: 1e300 })],
    ['exp the largest safe integer', () => ({ exp: Number.MAX_SAFE_INTEGER })],
    ['exp a fraction', () => ({ exp: now() + 3600.5 })],
    ['exp more than seven days after iat', () => ({ exp: now() + 7 * 86_400 + 1 })],
    ['exp before iat, both within the clock skew', () => ({ iat: now() + 50, exp: now() + 40 })],
    ['iat negative', () => ({ iat: -1 })],
    ['iat -1e300', () => ({ iat: -1e300 })],
  ])('time claims no token of ours carries, signed with the real key: %s, refused every time', async (_name, overrides) => {
    const token = realSigned({}, overrides());
    await expectRejected(t, token);
    await expectRejected(t, token);
    expect((await me(t, victim.jwt)).statusCode).toBe(200);
  });

  it.each(['exp', 'sub', 'sid', 'jti', 'iat'])('claims: missing %s, signed with the real key via SignJWT', async (claim) => {
    const rest = Object.fromEntries(Object.entries(claims()).filter(([name]) => name !== claim));
    await expectRejected(t, await new SignJWT(rest).setProtectedHeader(joseHeader()).sign(realKey()));
  });

  it.each([
    ['JWE compact, dir', () => `${b64url({ alg: 'dir', enc: 'A256GCM', kid })}..${b64url('iv-iv-iv-iv')}.${b64url(JSON.stringify(claims()))}.${b64url('tag')}`],
    ['JWE compact, RSA-OAEP', () => [b64url({ alg: 'RSA-OAEP', enc: 'A256GCM', kid }), b64url('cek'), b64url('iv'), b64url('ct'), b64url('tag')].join('.')],
  ])('not a compact JWS: %s', async (_name, build) => expectRejected(t, build()));

  it.each([
    ['flattened, raw JSON', 'flattened', (s: string) => s],
    ['flattened, base64url', 'flattened', (s: string) => b64url(s)],
    ['general, raw JSON', 'general', (s: string) => s],
    ['general, base64url', 'general', (s: string) => b64url(s)],
  ])('JSON-serialised JWS validly signed with the real key: %s', async (_name, form, encode) => {
    const payload = new TextEncoder().encode(JSON.stringify(claims()));
    const jws =
      form === 'flattened'
        ? await new FlattenedSign(payload).setProtectedHeader(joseHeader()).sign(realKey())
        : await new GeneralSign(payload).addSignature(realKey()).setProtectedHeader(joseHeader()).done().sign();
    await expectRejected(t, encode(JSON.stringify(jws)));
  });

  it('logout: the same JWT is 401 on the very next request', async () => {
    const jwt = await login(t, victim.email);
    expect((await me(t, jwt)).statusCode).toBe(200);
    expect((await json(t, 'POST', '/api/auth/logout', undefined, jwt)).statusCode).toBe(204);
    await expectRejected(t, jwt);
    expect((await me(t, victim.jwt)).statusCode, 'other sessions of the user are untouched').toBe(200);
  });

  it('a deleted user: their JWT is 401 on the very next request, even re-signed with the real key', async () => {
    const doomed = await signup(t);
    expect((await me(t, doomed.jwt)).statusCode).toBe(200);
    expect(await t.services.users.delete(doomed.id)).toBe(true);
    await expectRejected(t, doomed.jwt);
    await expectRejected(t, realSigned({}, { sub: doomed.id, sid: sidOf(doomed.jwt) }));
  });
});

describe('a valid user token', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('has header alg EdDSA, typ JWT and the kid of a published key', async () => {
    const header = decodeProtectedHeader(user.jwt);
    expect(header).toEqual({ alg: 'EdDSA', typ: 'JWT', kid: t.services.keys.signingKey().kid });
    expect((await jwksOf(t)).keys.map((k) => k.kid)).toContain(header.kid);
  });

  it('carries exactly iss, aud, sub, iat, exp, jti, sid, amr and auth_time: no email or username', () => {
    const { payload } = split(user.jwt);
    expect(Object.keys(payload).sort()).toEqual(['amr', 'aud', 'auth_time', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
    const iat = Math.floor(clock.now() / 1000);
    expect(payload).toMatchObject({ iss: 'rz-auth', aud: 'rz-api', sub: user.id, iat, amr: ['pwd'], auth_time: iat });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.sid).toMatch(/^[0-9a-f-]{36}$/);
    const raw = Buffer.from(user.jwt.split('.')[1] ?? '', 'base64url').toString('utf8');
    for (const personal of [user.email, user.username, user.email.split('@')[0] ?? '']) expect(raw).not.toContain(personal);
  });

  it('lives JWT_TTL_SECONDS (default 3600): valid a second before exp, invalid at exp', async () => {
    const jwt = await login(t, user.email);
    const { iat, exp } = split(jwt).payload as { iat: number; exp: number };
    expect(exp - iat).toBe(3600);
    clock.advance((exp - iat - 1) * 1000);
    expect((await me(t, jwt)).statusCode).toBe(200);
    clock.advance(1000);
    await expectRejected(t, jwt);
  });

  it('gets a fresh jti and sid on every login', async () => {
    const [a, b] = [split(await login(t, user.email)).payload, split(await login(t, user.email)).payload];
    expect(a.jti).not.toBe(b.jti);
    expect(a.sid).not.toBe(b.sid);
  });

  it('verifies offline against GET /.well-known/jwks.json with jose createLocalJWKSet', async () => {
    const jwt = await login(t, user.email);
    const jwks = createLocalJWKSet(await jwksOf(t));
    const options = { issuer: 'rz-auth', audience: 'rz-api', algorithms: ['EdDSA'], currentDate: new Date(clock.now()) };
    const { payload } = await jwtVerify(jwt, jwks, options);
    expect(payload.sub).toBe(user.id);
    const forged = assemble(split(jwt).header, { ...split(jwt).payload, sub: randomUUID() }, split(jwt).signature);
    await expect(jwtVerify(forged, jwks, options)).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });

  it('JWKS publishes only public Ed25519 parts: no d', async () => {
    const res = await t.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/"d"\s*:/);
    for (const key of (res.json() as JSONWebKeySet).keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    }
  });
});

describe('JWT_TTL_SECONDS=120', () => {
  const clock = new TestClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { JWT_TTL_SECONDS: '120' } });
  });
  afterAll(() => t.close());

  it('issues tokens with exp - iat == 120 that stop working after 120 s', async () => {
    const { jwt } = await signup(t);
    const { iat, exp } = split(jwt).payload as { iat: number; exp: number };
    expect(exp - iat).toBe(120);
    clock.advance(119_000);
    expect((await me(t, jwt)).statusCode).toBe(200);
    clock.advance(1000);
    await expectRejected(t, jwt);
  });
});

describe('signing key rotation', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
  });
  afterAll(() => t.close());
  const kids = async () => (await jwksOf(t)).keys.map((k) => k.kid);

  it('normal rotate: old tokens work until they expire, new ones carry the new kid, JWKS lists both', async () => {
    const oldKid = t.services.keys.signingKey().kid;
    const before = await login(t, user.email);
    expect((await me(t, before)).statusCode).toBe(200);
    clock.advance(30 * 60_000);
    const newKid = await t.services.keys.rotate();
    expect(newKid).not.toBe(oldKid);
    expect((await me(t, before)).statusCode).toBe(200);
    const after = await login(t, user.email);
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    expect(await kids()).toEqual(expect.arrayContaining([oldKid, newKid]));
    clock.advance(30 * 60_000);
    await expectRejected(t, before);
    expect((await me(t, after)).statusCode).toBe(200);
  });

  it('immediate rotate: tokens of the dropped keys are 401 on the very next request', async () => {
    const old = t.services.keys.signingKey();
    const before = await login(t, user.email);
    expect((await me(t, before)).statusCode, 'cached as valid before the rotation').toBe(200);
    const newKid = await t.services.keys.rotate({ immediate: true });
    await expectRejected(t, before);
    expect(await kids()).toEqual([newKid]);
    const after = await login(t, user.email);
    expect(decodeProtectedHeader(after).kid).toBe(newKid);
    expect((await me(t, after)).statusCode).toBe(200);
    // Still rejected when re-signed now with the dropped key, under its own kid or the new one.
    const iat = Math.floor(clock.now() / 1000);
    const fresh = { iss: 'rz-auth', aud: 'rz-api', sub: user.id, sid: sidOf(after), jti: randomUUID(), iat, exp: iat + 600 };
    await expectRejected(t, signEd25519({ alg: 'EdDSA', typ: 'JWT', kid: old.kid }, fresh, old.key));
    await expectRejected(t, signEd25519({ alg: 'EdDSA', typ: 'JWT', kid: newKid }, fresh, old.key));
  });
});

describe('signing key rotation by another process on the same database', () => {
  let serving: TestApp;
  let operator: TestApp;
  beforeAll(async () => {
    serving = await startTestApp();
    operator = await startTestApp({ dir: serving.dir });
  });
  afterAll(async () => {
    await operator.close();
    await serving.close();
  });

  // Regression: login, signup and the JWKS carry no token, so nothing synced them with the change
  // feed: after `keys rotate --immediate` elsewhere, the JWKS was stale and the first login was
  // signed with the dropped key. Each case makes its request the very first after the rotation.
  it('immediate rotate elsewhere: the very next login of this process is signed with the new key', async () => {
    const user = await signup(serving);
    const newKid = await operator.services.keys.rotate({ immediate: true });
    const jwt = await login(serving, user.email);
    expect(decodeProtectedHeader(jwt).kid).toBe(newKid);
    expect((await me(serving, jwt)).statusCode).toBe(200);
    await expectRejected(serving, user.jwt);
  });

  it('immediate rotate elsewhere: the very next JWKS of this process shows only the new key', async () => {
    const newKid = await operator.services.keys.rotate({ immediate: true });
    expect((await jwksOf(serving)).keys.map((k) => k.kid)).toEqual([newKid]);
  });
});
