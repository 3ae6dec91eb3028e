import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { createApiToken, expectProblem, json, registerApp, signup } from '../helpers/api.js';

const URL_OK = 'https://93.184.215.14/hooks/rz';
const PARALLEL = 8;

/** What one user may own is capped (MAX_*); past a cap, creation is 409 conflict naming it, however many requests race. */
describe('ownership caps', () => {
  const clock = new TestClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ clock, env: { MAX_API_TOKENS_PER_USER: '3', MAX_APPS_PER_USER: '2', MAX_TOKENS_PER_APP: '2', MAX_WEBHOOKS_PER_USER: '2' } });
  });
  afterAll(() => t.close());

  /** Sends `PARALLEL` creations at once; exactly `cap` succeed, the rest are 409 naming `variable`. */
  async function race(send: () => ReturnType<typeof json>, cap: number, variable: string): Promise<void> {
    const answers = await Promise.all(Array.from({ length: PARALLEL }, send));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(cap);
    const refused = answers.filter((a) => a.statusCode !== 201);
    expect(refused).toHaveLength(PARALLEL - cap);
    for (const res of refused) expect(expectProblem(res, 409, 'conflict').detail).toContain(variable);
  }

  it('MAX_API_TOKENS_PER_USER: parallel creations stop at the cap; revoked and expired tokens do not count', async () => {
    const user = await signup(t);
    await race(() => json(t, 'POST', '/api/tokens', { name: 'x' }, user.jwt), 3, 'MAX_API_TOKENS_PER_USER');
    const listed = (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json().tokens as Array<{ id: string }>;
    expect(listed).toHaveLength(3);
    expect((await json(t, 'DELETE', `/api/tokens/${listed[0]?.id}`, undefined, user.jwt)).statusCode).toBe(204);
    const short = await createApiToken(t, user.jwt, { expires_at: new Date(clock.now() + 60_000).toISOString() });
    expectProblem(await json(t, 'POST', '/api/tokens', { name: 'x' }, user.jwt), 409, 'conflict');
    clock.advance(60_000);
    expect(short.id).toBeTruthy();
    expect((await json(t, 'POST', '/api/tokens', { name: 'after expiry' }, user.jwt)).statusCode).toBe(201);
    // Another user is not affected.
    expect((await json(t, 'POST', '/api/tokens', { name: 'x' }, (await signup(t)).jwt)).statusCode).toBe(201);
  });

  it('a token at the cap can still be rotated, with a grace: the old one in its grace does not count', async () => {
    const user = await signup(t);
    const tokens = [];
    for (let i = 0; i < 3; i++) tokens.push(await createApiToken(t, user.jwt));
    const rotated = await json(t, 'POST', `/api/tokens/${tokens[0]?.id}/rotate`, { grace_seconds: 3600 }, user.jwt);
    expect(rotated.statusCode, rotated.body).toBe(201);
    expectProblem(await json(t, 'POST', '/api/tokens', { name: 'x' }, user.jwt), 409, 'conflict');
  });

  it('MAX_APPS_PER_USER: parallel registrations stop at the cap; a deleted app frees its place', async () => {
    const user = await signup(t);
    await race(() => json(t, 'POST', '/api/apps', { name: 'app' }, user.jwt), 2, 'MAX_APPS_PER_USER');
    const [first] = (await json(t, 'GET', '/api/apps', undefined, user.jwt)).json().apps as Array<{ id: string }>;
    expect((await json(t, 'DELETE', `/api/apps/${first?.id}`, undefined, user.jwt)).statusCode).toBe(204);
    expect((await json(t, 'POST', '/api/apps', { name: 'again' }, user.jwt)).statusCode).toBe(201);
  });

  it('MAX_TOKENS_PER_APP: parallel issues stop at the cap (the first token counts); a revoked one frees its place', async () => {
    const user = await signup(t);
    const app = await registerApp(t, user.jwt);
    await race(() => json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt), 1, 'MAX_TOKENS_PER_APP');
    expect((await json(t, 'DELETE', `/api/tokens/${app.token_id}`, undefined, user.jwt)).statusCode).toBe(204);
    expect((await json(t, 'POST', `/api/apps/${app.id}/tokens`, undefined, user.jwt)).statusCode).toBe(201);
  });

  it('MAX_WEBHOOKS_PER_USER: parallel additions stop at the cap', async () => {
    const user = await signup(t);
    await race(() => json(t, 'POST', '/api/webhooks', { url: URL_OK, event_types: ['token.created'] }, user.jwt), 2, 'MAX_WEBHOOKS_PER_USER');
  });
});

describe('ownership caps: defaults', () => {
  it('are documented defaults, and refuse to start when out of range, naming the variable', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig({}).caps).toEqual({ apiTokensPerUser: 500, appsPerUser: 100, tokensPerApp: 20, webhooksPerUser: 10 });
    expect(() => loadConfig({ MAX_APPS_PER_USER: '0' })).toThrow(/MAX_APPS_PER_USER/);
    expect(() => loadConfig({ MAX_TOKENS_PER_APP: 'many' })).toThrow(/MAX_TOKENS_PER_APP/);
  });
});
