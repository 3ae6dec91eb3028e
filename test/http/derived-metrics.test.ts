import { derive } from '@rz-auth/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, signup } from '../helpers/api.js';
import { newKek } from '../helpers/derived.js';
import { metricsEnv, registryOf, valueOf } from '../helpers/metrics.js';

/** Contract §10: a child's decisions count under token_type `derived`, not its parent's type. */
describe('derived tokens in rz_auth_decisions_total', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { DERIVE_KEK: newKek(), ...(await metricsEnv()) } });
  });
  afterAll(() => t.close());

  it('a child allowed on GET /api/me and refused on POST /api/tokens moves derived/ok and derived/insufficient_scope by one each', async () => {
    const user = await signup(t);
    const parent = await createApiToken(t, user.jwt, { derivable: true });
    const child = derive(parent.token, { ttl: '15m' });
    const count = (outcome: string) => valueOf(registryOf(t), 'rz_auth_decisions_total', { token_type: 'derived', outcome });
    const api = (outcome: string) => valueOf(registryOf(t), 'rz_auth_decisions_total', { token_type: 'api_token', outcome });
    const [ok, refused, apiOk] = [await count('ok'), await count('insufficient_scope'), await api('ok')];
    expect((await json(t, 'GET', '/api/me', undefined, child)).statusCode).toBe(200);
    expect((await json(t, 'POST', '/api/tokens', { name: 'x' }, child)).statusCode).toBe(403);
    expect([await count('ok'), await count('insufficient_scope'), await api('ok')]).toEqual([ok + 1, refused + 1, apiOk]);
  });
});
