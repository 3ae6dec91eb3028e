import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticator.js';
import { UserTokens } from '../../src/auth/jwt.js';
import { LastUseRecorder } from '../../src/lib/last-use.js';
import { SessionStore } from '../../src/account/session-store.js';
import { ServiceCredentialStore } from '../../src/service-credentials/store.js';
import { TokenStore } from '../../src/tokens/store.js';
import { UsageRecorder } from '../../src/tokens/usage.js';
import { UserStore } from '../../src/account/user-store.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { type CreatedApiToken, createApiToken, json, signup } from '../helpers/api.js';
import { assemble, split } from '../helpers/jwt-craft.js';

/*
 * The token cache holds tokens by value and keeps, beside it, which value each token id is cached
 * under (revocations name the id). With a cache of two, tokens push each other out: the index must
 * follow each eviction exactly, or a revoked token would stay cached under a value the index lost.
 */
describe('the opaque-token cache under eviction', () => {
  let t: TestApp;
  let authenticator: Authenticator;

  beforeAll(async () => {
    t = await startTestApp();
    const { db } = t.services.database;
    const tokens = new TokenStore(db);
    // A second authenticator over the app's store, with room for two tokens.
    authenticator = new Authenticator({
      tokens,
      services: new ServiceCredentialStore(db),
      sessions: new SessionStore(db),
      users: new UserStore(db),
      userTokens: new UserTokens(t.services.keys, t.config.jwt),
      usage: new UsageRecorder(tokens, 60_000, () => undefined),
      sessionUsage: new LastUseRecorder(async () => {}, 60_000, () => undefined),
      clock: t.services.clock,
      cacheSize: 2,
    });
  });
  afterAll(async () => t.close());

  it('a token revoked after others were pushed out of the cache is refused at once', async () => {
    const user = await signup(t);
    const created: CreatedApiToken[] = [];
    for (let i = 0; i < 5; i++) created.push(await createApiToken(t, user.jwt, { name: `cache ${i}` }));
    for (const { token } of created) await authenticator.authenticate(token, '127.0.0.1');
    // The last two are cached (a cache hit answers without waiting); the first three were pushed out.
    for (const { token } of created.slice(-2)) expect(authenticator.authenticate(token, '127.0.0.1')).not.toBeInstanceOf(Promise);

    for (const { id } of created) {
      expect((await json(t, 'DELETE', `/api/tokens/${id}`, undefined, user.jwt)).statusCode).toBe(204);
      // What the change feed delivers to every authenticator of the process.
      authenticator.forget({ id: 0, kind: 'token', ref: id, event: null });
    }
    // The two cached last first: a stale entry would still answer for them.
    for (const { token } of created.reverse()) {
      await expect(Promise.resolve().then(() => authenticator.authenticate(token, '127.0.0.1'))).rejects.toMatchObject({ code: 'invalid_token' });
    }
  });
});

/*
 * Verified JWTs are filed under the tail of their signature, so a token that reuses a cached
 * token's signature lands on that entry: only the whole token's equality may turn it into a hit.
 */
describe('the verified-JWT cache', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers only the exact token it verified, not one that reuses its signature, and keeps it', async () => {
    const { authenticator } = t.services;
    const victim = await signup(t);
    const other = await signup(t);
    expect(await authenticator.authenticate(victim.jwt, '127.0.0.1')).toMatchObject({ user: { id: victim.id } });

    const { header, payload, signature } = split(victim.jwt);
    const forged = assemble(header, { ...payload, sub: other.id }, signature);
    expect(forged.slice(-16)).toBe(victim.jwt.slice(-16));
    await expect(Promise.resolve().then(() => authenticator.authenticate(forged, '127.0.0.1'))).rejects.toMatchObject({ code: 'invalid_token' });
    // The refusal did not replace the real token's entry.
    expect(await authenticator.authenticate(victim.jwt, '127.0.0.1')).toMatchObject({ user: { id: victim.id } });
  });
});
