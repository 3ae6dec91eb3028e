import { derive } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, expectProblem, json, signup, type TestUser } from '../helpers/api.js';
import { newKek } from '../helpers/derived.js';

/** The `rl` caveat (contract §14.5): a bucket per child, and the parent's own bucket charged too. */
describe('derived token rate limits', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    // The per-credential limit on, small: children must never multiply it.
    t = await startTestApp({ env: { DERIVE_KEK: newKek(), RATE_LIMITS: 'on', RATE_LIMIT_CREDENTIAL: '20/60', RATE_LIMIT_ADDRESS: '100000/60' } });
    user = await signup(t);
  });
  afterAll(() => t.close());

  it('a child with rl 5/60 gets 429 on the sixth request, with a RateLimit policy named child', async () => {
    const parent = await createApiToken(t, user.jwt, { derivable: true });
    const child = derive(parent.token, { ttl: 600, rl: { q: 5, w: 60 } });
    for (let i = 1; i <= 5; i++) {
      const res = await json(t, 'GET', '/api/me', undefined, child);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-policy']).toContain('"child";q=5;w=60');
      expect(res.headers.ratelimit).toContain(`"child";r=${5 - i}`);
    }
    const sixth = await json(t, 'GET', '/api/me', undefined, child);
    expectProblem(sixth, 429, 'rate_limited');
    expect(sixth.headers.ratelimit).toMatch(/"child";r=0;t=\d+/);
    expect(sixth.headers['retry-after']).toMatch(/^\d+$/);
    // A sibling has a bucket of its own.
    expect((await json(t, 'GET', '/api/me', undefined, derive(parent.token, { ttl: 600, rl: { q: 5, w: 60 } }))).statusCode).toBe(200);
  });

  it('10 children of one parent together never exceed the parent\'s own limit', async () => {
    const parent = await createApiToken(t, user.jwt, { derivable: true });
    const children = Array.from({ length: 10 }, () => derive(parent.token, { ttl: 600, rl: { q: 1000, w: 60 } }));
    let ok = 0;
    let limited = 0;
    for (let round = 0; round < 4; round++) {
      for (const child of children) {
        const res = await json(t, 'GET', '/api/me', undefined, child);
        if (res.statusCode === 200) ok++;
        else if (res.statusCode === 429) limited++;
      }
    }
    expect(ok).toBe(20);
    expect(limited).toBe(20);
    expectProblem(await json(t, 'GET', '/api/me', undefined, parent.token), 429, 'rate_limited');
  });
});
