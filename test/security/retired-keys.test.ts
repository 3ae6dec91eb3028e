import { randomUUID } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectInvalidToken, login, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { signEd25519, split } from '../helpers/jwt-craft.js';

/**
 * A retired signing key verifies for one token lifetime plus a minute of skew after its
 * retirement, then never again: on an instance that runs for days without reloading its keys too.
 */

const me = (t: TestApp, token: string) => t.inject({ method: 'GET', url: '/api/me', headers: { authorization: `Bearer ${token}` } });
const kids = async (t: TestApp) => ((await t.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet).keys.map((k) => k.kid);

// Regression: the age cutoff was applied only when keys were loaded, so on a long-running instance
// a retired key stayed in the JWKS and kept verifying for ever.
describe('a retired signing key on a long-running instance', () => {
  const clock = new TestClock();
  let t: TestApp;
  let user: TestUser;
  /** JWT_TTL_SECONDS (default) plus the minute of skew. */
  const WINDOW_MS = (3600 + 60) * 1000;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
  });
  afterAll(() => t.close());

  /** A token signed with `key` for a live session of the user, valid for a day by its claims. */
  const signedWith = (kid: string, key: Parameters<typeof signEd25519>[2], sid: string) => {
    const iat = Math.floor(clock.now() / 1000);
    return signEd25519({ alg: 'EdDSA', typ: 'JWT', kid }, { iss: 'rz-auth', aud: 'rz-api', sub: user.id, sid, jti: randomUUID(), iat, exp: iat + 86_400 }, key);
  };

  it('verifies until its window ends, then stops verifying and leaves the JWKS, without a reload', async () => {
    const retired = t.services.keys.signingKey();
    const rotatedAt = clock.now();
    const newKid = await t.services.keys.rotate();
    clock.advance(WINDOW_MS - 30_000);
    // A session that outlives the window, so only the key can be what refuses the tokens below.
    const current = await login(t, user.email);
    const sid = String(split(current).payload.sid);
    const early = signedWith(retired.kid, retired.key, sid);
    const inside = await me(t, early);
    expect(inside.statusCode, 'inside the window').toBe(200);
    // It said the claim's exp, a day away, so a service caching the introspection kept accepting it.
    const expiresAt = Date.parse(inside.json().auth.expires_at);
    expect(expiresAt, 'when it stops working: the end of the key\'s window').toBeLessThanOrEqual(rotatedAt + WINDOW_MS);
    expect(expiresAt).toBeGreaterThan(clock.now());
    expect(await kids(t)).toEqual(expect.arrayContaining([retired.kid, newKid]));

    clock.advance(30_000);
    expectInvalidToken(await me(t, early));
    expectInvalidToken(await me(t, signedWith(retired.kid, retired.key, sid)));
    expect(await kids(t)).toEqual([newKid]);
    expect(t.services.keys.kids()).toEqual([newKid]);
    expect((await me(t, current)).statusCode, 'the session itself is fine').toBe(200);
  });

  it('the key that signs never ages out', async () => {
    const { kid, key } = t.services.keys.signingKey();
    clock.advance(30 * 86_400_000);
    const sid = String(split(await login(t, user.email)).payload.sid);
    expect((await me(t, signedWith(kid, key, sid))).statusCode).toBe(200);
    expect(await kids(t)).toEqual([kid]);
  });
});
