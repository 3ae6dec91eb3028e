import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateToken } from '../../../src/lib/token-format.js';
import type { Verifier, VerifyError } from '../src/index.js';
import { closeAll, type Handler, json, openStream, redirect, served, signer, verifierOf } from './fake-upstream.js';
import { until } from './rz-auth.js';

/**
 * What the verifier reads of answers that are not rz-auth's: an upstream that the configured URL
 * reaches by mistake (a proxy, another service) must not make a service buffer any amount of it.
 * A local server plays the upstream; its event stream is absent, so every token is looked up.
 */

afterEach(async () => {
  vi.useRealTimers();
  await closeAll();
});

/** What verify() came to: the caller's type and user, or the refusal's code. */
const settle = (verifier: Verifier, token: string): Promise<string> =>
  verifier.verify(`Bearer ${token}`).then(
    (caller) => `accepted ${caller.tokenType} ${caller.userId}`,
    (error: unknown) => (error as VerifyError).code,
  );

const PADDING = 'x'.repeat(2 * 1024 * 1024);

const active = { active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '' };
const now = () => Math.floor(Date.now() / 1000);
/** rz-auth's answer for the session of user u1's token s1. */
const session = () => ({ active: true, token_type: 'user', sub: 'u1', jti: 's1', scope: '*' });
/** rz-auth for user tokens signed with `jwk`: their session's introspection and the key set. */
const userUpstream = (jwk: unknown): Record<string, Handler> => ({ '/api/introspect': json(session), '/.well-known/jwks.json': json(() => ({ keys: [jwk] })) });

describe('answers past 64 KiB are refused, not buffered', () => {
  it('an introspection answer of 2 MiB was read whole and taken as a yes: now 503 unavailable', async () => {
    const small = await served({ '/api/introspect': json(() => active) });
    expect(await settle(verifierOf(small.url), generateToken('api'))).toBe('accepted api_token u1');
    const huge = await served({ '/api/introspect': json(() => ({ ...active, padding: PADDING })) });
    expect(await settle(verifierOf(huge.url), generateToken('api'))).toBe('unavailable');
  });

  it('a key set of 2 MiB was read whole and used: now 503 unavailable', async () => {
    const keys = await signer('k1');
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: now() + 600 });
    // The user token's session is checked by introspection while the stream is down.
    const small = await served(userUpstream(keys.jwk));
    expect(await settle(verifierOf(small.url), jwt)).toBe('accepted user u1');
    const huge = await served({ ...userUpstream(keys.jwk), '/.well-known/jwks.json': json(() => ({ keys: [keys.jwk], padding: PADDING })) });
    expect(await settle(verifierOf(huge.url), jwt)).toBe('unavailable');
  });
});

/** The other origin a redirect points to: it answers yes for anyone, and keys of its own. */
async function otherOrigin(jwk?: unknown) {
  const yes = { active: true, token_type: 'api_token', sub: 'attacker', jti: 't-evil', scope: 'games:publish' };
  return served({
    '/api/introspect': json(() => yes),
    '/.well-known/jwks.json': json(() => ({ keys: jwk ? [jwk] : [] })),
    '/api/events': openStream,
  });
}

describe('redirects from rz-auth are refused, never followed', () => {
  it.each([302, 307, 308])('an introspection answered with a %i to another origin was followed, the token re-sent there and its active answer accepted: now 503, that origin never asked', async (status) => {
    const evil = await otherOrigin();
    const rz = await served({ '/api/introspect': redirect(status, `${evil.url}/api/introspect`) });
    expect(await settle(verifierOf(rz.url), generateToken('api'))).toBe('unavailable');
    expect(evil.count('/api/introspect')).toBe(0);
  });

  it('an event stream answered with a 307 to another origin was followed and counted as up: now a failure of the stream, that origin never reached', async () => {
    const evil = await otherOrigin();
    const rz = await served({ '/api/events': redirect(307, `${evil.url}/api/events`) });
    const errors: unknown[] = [];
    const verifier = verifierOf(rz.url, { onStreamError: (error) => errors.push(error) });
    await until(() => errors.length >= 2, 'the redirected stream failed twice', 3000);
    expect(verifier.streaming).toBe(false);
    expect(evil.requests).toHaveLength(0);
  });

  it('with a fetch option that follows redirects whatever it is asked, an introspection, a key set and a stream reached through one were used: now each refused', async () => {
    const other = await signer('k-evil');
    const evil = await otherOrigin(other.jwk);
    const rz = await served({
      '/api/introspect': redirect(307, `${evil.url}/api/introspect`),
      '/.well-known/jwks.json': redirect(307, `${evil.url}/.well-known/jwks.json`),
      '/api/events': redirect(307, `${evil.url}/api/events`),
    });
    const keys = await served({ '/api/introspect': json(session), '/.well-known/jwks.json': redirect(307, `${evil.url}/.well-known/jwks.json`) });
    // A wrapper that keeps only the headers, body and signal it is given, as many do.
    const following: typeof fetch = (input, init) => globalThis.fetch(input, { method: init?.method ?? 'GET', headers: init?.headers, body: init?.body ?? null, signal: init?.signal ?? null });
    const errors: unknown[] = [];
    const verifier = verifierOf(rz.url, { fetch: following, onStreamError: (error) => errors.push(error) });
    expect(await settle(verifier, generateToken('api'))).toBe('unavailable');
    const jwt = await other.sign({ sub: 'u1', sid: 's1', exp: now() + 600 });
    expect(await settle(verifierOf(keys.url, { fetch: following }), jwt)).toBe('unavailable');
    await until(() => errors.length >= 2, 'the redirected stream failed twice', 3000);
    expect(verifier.streaming).toBe(false);
  });

  it("every request to rz-auth asked fetch to follow redirects (the introspection, the stream) or left them to the caller's judgement (the key set): now each asks for redirect: 'error'", async () => {
    const keys = await signer('k1');
    const rz = await served({ ...userUpstream(keys.jwk), '/api/events': openStream });
    const asked = new Map<string, RequestInit['redirect']>();
    const spying: typeof fetch = (input, init) => {
      asked.set(new URL(String(input)).pathname, init?.redirect);
      return globalThis.fetch(input, init);
    };
    const verifier = verifierOf(rz.url, { fetch: spying });
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp: now() + 600 });
    expect(await settle(verifier, jwt)).toBe('accepted user u1');
    await until(() => verifier.streaming, 'the stream is up');
    expect(Object.fromEntries(asked)).toEqual({ '/api/events': 'error', '/api/introspect': 'error', '/.well-known/jwks.json': 'error' });
  });
});

describe('an answer never outlives the token', () => {
  it("a user JWT's session answered without exp was cached past the JWT's own signed expiry (accepted up to cacheMaxAgeMs after it): now refused once the JWT has expired", async () => {
    const keys = await signer('k1');
    const rz = await served({ ...userUpstream(keys.jwk), '/api/events': openStream });
    const verifier = verifierOf(rz.url);
    await until(() => verifier.streaming, 'the stream is up');
    const exp = now() + 30;
    const jwt = await keys.sign({ sub: 'u1', sid: 's1', exp });
    expect(await settle(verifier, jwt)).toBe('accepted user u1');
    expect(verifier.cacheSize).toBe(1);
    // Only the wall clock moves on: the stream's timers keep running, so it stays up.
    vi.useFakeTimers({ toFake: ['Date'], now: (exp + 60) * 1000 });
    expect(await settle(verifier, jwt)).toBe('invalid_token');
    expect(verifier.streaming).toBe(true);
  });

  it('an active answer whose exp had already passed was accepted (once, uncached): now refused as invalid_token', async () => {
    const rz = await served({ '/api/introspect': json(() => ({ active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '', exp: now() - 10 })) });
    expect(await settle(verifierOf(rz.url), generateToken('api'))).toBe('invalid_token');
  });

  it.each([1e300, -5, 12.5, 2 ** 53])('an active answer with exp %s (no sane date: 1e300 is an Invalid Date) was accepted without an expiry: now 503, as any malformed answer', async (exp) => {
    const rz = await served({ '/api/introspect': json(() => ({ active: true, token_type: 'api_token', sub: 'u1', jti: 't1', scope: '', exp })) });
    expect(await settle(verifierOf(rz.url), generateToken('api'))).toBe('unavailable');
  });
});

describe('the scope *', () => {
  it.each([
    ['api_token', {}],
    ['app_token', { client_id: 'a1' }],
  ])('an %s whose scopes included * was taken to hold every scope: now it holds only the scopes it names', async (type, extra) => {
    const rz = await served({ '/api/introspect': json(() => ({ active: true, token_type: type, sub: 'u1', jti: 't1', scope: '* games:read', ...extra })) });
    const verifier = verifierOf(rz.url);
    const caller = await verifier.verify(`Bearer ${generateToken(type === 'api_token' ? 'api' : 'app')}`);
    verifier.requireScopes(caller, 'games:read');
    expect(() => verifier.requireScopes(caller, 'games:publish')).toThrow(expect.objectContaining({ code: 'insufficient_scope', status: 403 }));
  });

  it("a user token's * still holds every scope", async () => {
    const keys = await signer('k1');
    const rz = await served(userUpstream(keys.jwk));
    const verifier = verifierOf(rz.url);
    const caller = await verifier.verify(`Bearer ${await keys.sign({ sub: 'u1', sid: 's1', exp: now() + 600 })}`);
    verifier.requireScopes(caller, 'games:publish', 'anything:else');
  });
});
