import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { tempDir } from '../helpers/app.js';
import { scopesFileEnv } from '../helpers/scopes.js';
import { assertBuilt, request, ROOT, runCli, type ServerProcess, spawnNode, spawnServer } from '../helpers/server-process.js';

/**
 * examples/resource-server: the example platform service, as an operator runs it. rz-auth declares
 * games:publish in its SCOPES_FILE, the CLI makes the service credential, the example starts with
 * PORT, RZ_AUTH_URL and RZ_SERVICE_TOKEN; every process is real.
 */

const temp = tempDir();
let rz: ServerProcess;
let example: ServerProcess;
let jwt: string;
const PASSWORD = 'correct horse battery staple';

const streamUp = async (url: string) => {
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
  return res.status === 200 && ((await res.json()) as { events?: string }).events === 'up';
};

const streamDown = async (url: string) => ((await (await fetch(`${url}/healthz`)).json()) as { events?: string }).events === 'down';

beforeAll(async () => {
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', MFA_ENCRYPTION_KEY: randomBytes(32).toString('base64'), ...scopesFileEnv(temp.dir) };
  rz = await spawnServer(env, 30_000);
  const created = await runCli(['services', 'create', 'games'], env);
  expect(created.code, created.stderr).toBe(0);
  const { token } = JSON.parse(created.stdout) as { token: string };
  // The example imports the package's dist/: never a build older than its sources.
  assertBuilt();
  example = await spawnNode([join(ROOT, 'examples', 'resource-server', 'server.mjs')], { RZ_AUTH_URL: rz.url, RZ_SERVICE_TOKEN: token }, { ready: streamUp });
  const signup = await request(rz.url, 'POST', '/api/auth/signup', { body: { email: 'pub@example.com', username: 'publisher', password: PASSWORD } });
  expect(signup.status).toBe(201);
  jwt = (signup.body as { token: string }).token;
}, 60_000);
afterAll(async () => {
  await example?.stop('SIGKILL');
  await rz?.stop('SIGKILL');
  temp.remove();
});

const tokenWith = async (scopes: string[]) => {
  const res = await request(rz.url, 'POST', '/api/tokens', { token: jwt, body: { name: 'example', scopes } });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string };
};

const publish = (token?: string) => request(example.url, 'POST', '/games', { body: { title: 'Tetris' }, ...(token === undefined ? {} : { token }) });

describe('the example resource server', () => {
  it('GET /whoami: 200 with any valid token, 401 without one or with a bad one', async () => {
    const plain = await tokenWith([]);
    const asUser = await request(example.url, 'GET', '/whoami', { token: jwt });
    expect(asUser.status).toBe(200);
    expect(asUser.body).toEqual({ user_id: expect.any(String), token_type: 'user' });
    expect((await request(example.url, 'GET', '/whoami', { token: plain.token })).body).toMatchObject({ token_type: 'api_token' });

    const none = await request(example.url, 'GET', '/whoami');
    expect([none.status, none.headers.get('www-authenticate'), none.body]).toEqual([401, 'Bearer realm="games"', { code: 'unauthorized', message: expect.any(String) }]);
    const bad = await request(example.url, 'GET', '/whoami', { token: `rz_${'0'.repeat(49)}` });
    expect([bad.status, bad.headers.get('www-authenticate'), (bad.body as { code: string }).code]).toEqual([401, 'Bearer realm="games", error="invalid_token"', 'invalid_token']);
  });

  it('POST /games: 201 with games:publish (API token, app token, user), 403 insufficient_scope without it, 401 without a token', async () => {
    const scoped = await tokenWith(['games:publish']);
    const app = await request(rz.url, 'POST', '/api/apps', { token: jwt, body: { name: 'Publisher', scopes: ['games:publish'] } });
    for (const token of [scoped.token, (app.body as { token: string }).token, jwt]) {
      const created = await publish(token);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: 'Tetris', published_by: expect.any(String) });
    }
    const unscoped = await publish((await tokenWith([])).token);
    expect(unscoped.status).toBe(403);
    expect(unscoped.headers.get('www-authenticate')).toBe('Bearer realm="games", error="insufficient_scope", scope="games:publish"');
    expect(unscoped.body).toMatchObject({ code: 'insufficient_scope' });
    const anonymous = await publish();
    expect([anonymous.status, (anonymous.body as { code: string }).code]).toEqual([401, 'unauthorized']);
  });

  it('POST /games/{id}/publish: a login with TOTP passes; a password-only login gets the RFC 9470 challenge, an API token 403', async () => {
    const body = { email: 'stepup@example.com', username: 'stepup', password: PASSWORD };
    const passwordOnly = ((await request(rz.url, 'POST', '/api/auth/signup', { body })).body as { token: string }).token;
    // An authenticator app through the enrolment routes, confirmed with the code of this step.
    const started = await request(rz.url, 'POST', '/api/me/mfa/totp', { token: passwordOnly });
    const { factor_id: factorId, secret } = started.body as { factor_id: string; secret: string };
    expect((await request(rz.url, 'POST', `/api/me/mfa/totp/${factorId}/confirm`, { token: passwordOnly, body: { code: totpCodeAt(secret, Date.now()) } })).status).toBe(200);
    const pending = await request(rz.url, 'POST', '/api/auth/login', { body: { email: body.email, password: PASSWORD } });
    const mfaToken = (pending.body as { mfa_token: string }).mfa_token;
    // The next step's code: the confirmation took this one, and rz-auth accepts T+1.
    const verified = await request(rz.url, 'POST', '/api/auth/mfa/verify', { body: { mfa_token: mfaToken, method: 'totp', code: totpCodeAt(secret, Date.now() + 30_000) } });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const withTotp = (verified.body as { token: string }).token;

    const published = await request(example.url, 'POST', '/games/g1/publish', { token: withTotp });
    expect([published.status, published.body]).toEqual([200, { id: 'g1', published_by: expect.any(String) }]);
    const challenged = await request(example.url, 'POST', '/games/g1/publish', { token: passwordOnly });
    expect([challenged.status, challenged.headers.get('www-authenticate'), (challenged.body as { code: string }).code]).toEqual([
      401,
      'Bearer realm="games", error="insufficient_user_authentication", max_age="300"',
      'insufficient_user_authentication',
    ]);
    const scoped = await tokenWith(['games:publish']);
    const refused = await request(example.url, 'POST', '/games/g1/publish', { token: scoped.token });
    expect([refused.status, (refused.body as { code: string; message: string }).code, (refused.body as { message: string }).message]).toEqual([403, 'insufficient_scope', expect.stringMatching(/user login/)]);
  });

  it('refuses a revoked token within 100 ms of the revocation\'s 204', async () => {
    const scoped = await tokenWith(['games:publish']);
    expect((await publish(scoped.token)).status).toBe(201);
    expect((await request(rz.url, 'DELETE', `/api/tokens/${scoped.id}`, { token: jwt })).status).toBe(204);
    const answered = performance.now();
    let status = 201;
    while (status === 201 && performance.now() - answered < 5000) status = (await publish(scoped.token)).status;
    const ms = Math.round(performance.now() - answered);
    console.log(`example resource server: refused ${ms} ms after the revocation's 204`);
    expect(status).toBe(401);
    expect(ms).toBeLessThan(100);
  });

  it('with rz-auth gone: 503 unavailable, never an accepted token', async () => {
    const scoped = await tokenWith(['games:publish']);
    expect((await publish(scoped.token)).status).toBe(201);
    await rz.stop('SIGKILL');
    // Until the example notices the stream's end its cache was still correct; from then on nothing is cached.
    const deadline = Date.now() + 10_000;
    while (!(await streamDown(example.url)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const res = await publish(scoped.token);
    expect([res.status, (res.body as { code: string }).code, res.headers.get('www-authenticate')]).toEqual([503, 'unavailable', null]);
  });
});
