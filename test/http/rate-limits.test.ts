import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/lib/token-format.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { bearer, createApiToken, expectProblem, json, PASSWORD, signup } from '../helpers/api.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const start = async (env: Record<string, string>) => {
  t = await startTestApp({ env: { RATE_LIMITS: 'on', ...env } });
  return t;
};

function expectRateLimited(res: LightMyRequestResponse): number {
  expectProblem(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  return retryAfter;
}

const get = (app: TestApp, url: string, headers: Record<string, string> = {}, remoteAddress = '198.51.100.1') =>
  app.inject({ method: 'GET', url, headers, remoteAddress });

const login = (app: TestApp, email: string, password = 'not the password', remoteAddress = '198.51.100.1') =>
  app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: { email, password }, remoteAddress });

describe('per credential', () => {
  it('counts a user across sessions, answers 429 with Retry-After, and sends the RateLimit fields on every response', async () => {
    const app = await start({ RATE_LIMIT_CREDENTIAL: '3/60' });
    const user = await signup(app);
    const first = await get(app, '/api/me', bearer(user.jwt));
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"credential";q=3;w=60');
    expect(first.headers.ratelimit).toMatch(/^"credential";r=2;t=(60|59)$/);
    const second = await json(app, 'POST', '/api/auth/login', { email: user.email, password: PASSWORD });
    const otherSession = second.json().token as string;
    expect((await get(app, '/api/tokens', bearer(otherSession))).headers.ratelimit).toMatch(/^"credential";r=1;/);
    expect((await get(app, '/api/me', bearer(user.jwt))).headers.ratelimit).toMatch(/^"credential";r=0;/);
    const limited = await get(app, '/api/me', bearer(otherSession));
    expect(expectRateLimited(limited)).toBeLessThanOrEqual(60);
    expect(limited.headers.ratelimit).toMatch(/^"credential";r=0;t=\d+$/);
  });

  it('gives each API and app token its own bucket, apart from the user', async () => {
    const app = await start({ RATE_LIMIT_CREDENTIAL: '2/60' });
    const user = await signup(app);
    const { token } = await createApiToken(app, user.jwt);
    await get(app, '/api/me', bearer(user.jwt));
    expectRateLimited(await get(app, '/api/me', bearer(user.jwt)));
    expect((await get(app, '/api/me', bearer(token))).statusCode).toBe(200);
    expect((await get(app, '/api/me', bearer(token))).statusCode).toBe(200);
    expectRateLimited(await get(app, '/api/me', bearer(token)));
  });
});

describe('per client address', () => {
  it('throttles requests with invalid tokens, without touching valid callers from the same address', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '3/60', RATE_LIMIT_CREDENTIAL: '100/60' });
    const user = await signup(app);
    for (let i = 0; i < 3; i++) {
      const res = await get(app, '/api/me', bearer(generateToken('api')));
      expectProblem(res, 401, 'invalid_token');
      expect(res.headers['ratelimit-policy']).toBe('"address";q=3;w=60');
    }
    expectRateLimited(await get(app, '/api/me', bearer(generateToken('api'))));
    expectRateLimited(await get(app, '/api/me'));
    expect((await get(app, '/api/me', bearer(user.jwt))).statusCode).toBe(200);
    expect((await get(app, '/api/me', bearer(generateToken('api')), '198.51.100.2')).statusCode).toBe(401);
  });

  it('limits public routes too', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '1/60' });
    expect((await get(app, '/.well-known/jwks.json')).headers['ratelimit-policy']).toBe('"address";q=1;w=60');
    expectRateLimited(await get(app, '/.well-known/jwks.json'));
  });

  it('ignores a spoofed X-Forwarded-For by default', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '2/60' });
    for (const spoof of ['1.1.1.1', '2.2.2.2']) expect((await get(app, '/.well-known/jwks.json', { 'x-forwarded-for': spoof })).statusCode).toBe(200);
    expectRateLimited(await get(app, '/.well-known/jwks.json', { 'x-forwarded-for': '3.3.3.3' }));
  });

  it('believes X-Forwarded-For only for the hops TRUST_PROXY names', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '1/60', TRUST_PROXY: '1' });
    const viaProxy = (client: string) => get(app, '/.well-known/jwks.json', { 'x-forwarded-for': `9.9.9.9, ${client}` }, '10.0.0.1');
    expect((await viaProxy('203.0.113.1')).statusCode).toBe(200);
    expect((await viaProxy('203.0.113.2')).statusCode).toBe(200);
    // One hop trusted: the client is the last address the proxy appended, not the spoofable first one.
    expectRateLimited(await viaProxy('203.0.113.1'));
  });

  it('TRUST_PROXY naming the load balancer believes X-Forwarded-For from it only, not from a client reaching the port directly', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '1/60', TRUST_PROXY: '10.0.0.5, 10.0.1.0/24', HOST: '0.0.0.0' });
    const from = (socket: string, client: string) => get(app, '/.well-known/jwks.json', { 'x-forwarded-for': client }, socket);
    expect((await from('10.0.0.5', '203.0.113.1')).statusCode).toBe(200);
    expect((await from('10.0.1.77', '203.0.113.2')).statusCode).toBe(200);
    expectRateLimited(await from('10.0.1.8', '203.0.113.1'));
    // A client that reaches the port itself is its socket address, whatever it forwards.
    expect((await from('198.51.100.9', '203.0.113.3')).statusCode).toBe(200);
    expectRateLimited(await from('198.51.100.9', '203.0.113.4'));
  });

  it('buckets IPv6 clients by /64', async () => {
    const app = await start({ RATE_LIMIT_ADDRESS: '2/60' });
    expect((await get(app, '/.well-known/jwks.json', {}, '2001:db8:0:1::1')).statusCode).toBe(200);
    expect((await get(app, '/.well-known/jwks.json', {}, '2001:db8:0:1:ffff::2')).statusCode).toBe(200);
    expectRateLimited(await get(app, '/.well-known/jwks.json', {}, '2001:db8:0:1:aaaa::3'));
    expect((await get(app, '/.well-known/jwks.json', {}, '2001:db8:0:2::1')).statusCode).toBe(200);
  });
});

describe('login', () => {
  it('limits per submitted email, known or not, identically; even the right password gets 429', async () => {
    const app = await start({ RATE_LIMIT_LOGIN_EMAIL: '2/600', RATE_LIMIT_LOGIN_ADDRESS: '100/60' });
    const user = await signup(app);
    const answers: LightMyRequestResponse[] = [];
    // Each email from its own address, so the two answers can be compared header for header.
    for (const [email, address] of [[user.email, '198.51.100.1'], ['nobody@example.com', '198.51.100.2']] as const) {
      for (let i = 0; i < 2; i++) expectProblem(await login(app, email, 'wrong password here', address), 401, 'invalid_credentials');
      answers.push(await login(app, email, email === user.email ? PASSWORD : 'wrong password here', address));
    }
    const [known, unknown] = answers as [LightMyRequestResponse, LightMyRequestResponse];
    expectRateLimited(known);
    expectRateLimited(unknown);
    const strip = (r: LightMyRequestResponse) => ({ ...r.json(), request_id: '' });
    expect(strip(known)).toEqual(strip(unknown));
    expect(known.headers.ratelimit).toBe(unknown.headers.ratelimit);
    const names = (r: LightMyRequestResponse) => Object.keys(r.headers).filter((h) => !['date', 'x-request-id'].includes(h)).sort();
    expect(names(known)).toEqual(names(unknown));
    // Case and whitespace variants are the same email.
    expectRateLimited(await login(app, ` ${user.email.toUpperCase()} `, PASSWORD));
  });

  it('counted each Unicode form of an email apart (twice the guesses): now one counter for the one address', async () => {
    const app = await start({ RATE_LIMIT_LOGIN_EMAIL: '2/600', RATE_LIMIT_LOGIN_ADDRESS: '100/60' });
    const user = await signup(app, { email: `jos\u00e9-${Math.random().toString(36).slice(2, 10)}@example.com` });
    const decomposed = user.email.normalize('NFD');
    expectProblem(await login(app, user.email, 'wrong password here', '198.51.100.3'), 401, 'invalid_credentials');
    expectProblem(await login(app, decomposed, 'wrong password here', '198.51.100.4'), 401, 'invalid_credentials');
    expectRateLimited(await login(app, decomposed, PASSWORD, '198.51.100.5'));
    expectRateLimited(await login(app, user.email, PASSWORD, '198.51.100.6'));
  });

  it('limits per address across emails, with both policies in the headers', async () => {
    const app = await start({ RATE_LIMIT_LOGIN_ADDRESS: '2/60', RATE_LIMIT_LOGIN_EMAIL: '10/600' });
    const first = await login(app, 'a@example.com');
    expect(first.headers['ratelimit-policy']).toBe('"login-address";q=2;w=60, "login-email";q=10;w=600');
    await login(app, 'b@example.com');
    expectRateLimited(await login(app, 'c@example.com'));
    expectProblem(await login(app, 'c@example.com', 'x', '198.51.100.9'), 401, 'invalid_credentials');
  });

  it('each limit can be turned off', async () => {
    const app = await start({ RATE_LIMIT_LOGIN_EMAIL: 'off', RATE_LIMIT_LOGIN_ADDRESS: '100/60' });
    for (let i = 0; i < 12; i++) expect((await login(app, 'same@example.com')).statusCode).toBe(401);
    expect((await login(app, 'same@example.com')).headers['ratelimit-policy']).toBe('"login-address";q=100;w=60');
  });
});

// Regression: refused logins still created per-email counters. The email was counted even when the
// address limit refused the request, so a client over its address limit could charge anyone's
// email and make the server keep a counter (for the email's whole window) per email it made up.
describe('login refused by the address limit', () => {
  it('counts no email and keeps no counter for it; its headers name the address limit alone', async () => {
    const app = await start({ RATE_LIMIT_LOGIN_ADDRESS: '2/60', RATE_LIMIT_LOGIN_EMAIL: '10/600' });
    await login(app, 'first@example.com');
    await login(app, 'second@example.com');
    for (let i = 0; i < 200; i++) {
      const refused = await login(app, `made-up-${i}@example.com`);
      expectRateLimited(refused);
      expect(refused.headers['ratelimit-policy']).toBe('"login-address";q=2;w=60');
      expect(refused.headers.ratelimit).toMatch(/^"login-address";r=0;t=\d+$/);
    }
    expect(app.services.rateLimiter.storedKeys('login-email')).toBe(2);
  });

  it("does not charge the submitted email: its owner's attempts from elsewhere are untouched", async () => {
    const app = await start({ RATE_LIMIT_LOGIN_ADDRESS: '2/60', RATE_LIMIT_LOGIN_EMAIL: '3/600' });
    const user = await signup(app);
    for (let i = 0; i < 2; i++) expectProblem(await login(app, user.email), 401, 'invalid_credentials');
    for (let i = 0; i < 5; i++) expectRateLimited(await login(app, user.email));
    const third = await login(app, user.email, PASSWORD, '198.51.100.2');
    expect(third.statusCode).toBe(200);
    expect(third.headers.ratelimit).toMatch(/^"login-address";r=1;t=\d+, "login-email";r=0;t=\d+$/);
    expectRateLimited(await login(app, user.email, PASSWORD, '198.51.100.3'));
  });
});

describe('signup refused by the address limit', () => {
  it('counts no email and keeps no counter for it', async () => {
    const app = await start({ RATE_LIMIT_SIGNUP_ADDRESS: '1/3600', RATE_LIMIT_SIGNUP_EMAIL: '5/3600' });
    const attempt = (i: number) =>
      app.inject({ method: 'POST', url: '/api/auth/signup', headers: { 'content-type': 'application/json' }, payload: { email: `s${i}@example.com`, username: `s_${i}`, password: PASSWORD }, remoteAddress: '198.51.100.1' });
    expect((await attempt(0)).statusCode).toBe(201);
    for (let i = 1; i <= 100; i++) {
      const refused = await attempt(i);
      expectRateLimited(refused);
      expect(refused.headers['ratelimit-policy']).toBe('"signup-address";q=1;w=3600');
    }
    expect(app.services.rateLimiter.storedKeys('signup-email')).toBe(1);
  });
});

describe('signup', () => {
  it('limits per address and per email, conflicts included', async () => {
    const app = await start({ RATE_LIMIT_SIGNUP_ADDRESS: '3/3600', RATE_LIMIT_SIGNUP_EMAIL: '2/3600' });
    const attempt = (email: string, username: string, remoteAddress = '198.51.100.1') =>
      app.inject({ method: 'POST', url: '/api/auth/signup', headers: { 'content-type': 'application/json' }, payload: { email, username, password: PASSWORD }, remoteAddress });
    expect((await attempt('taken@example.com', 'taken')).statusCode).toBe(201);
    expectProblem(await attempt('taken@example.com', 'other', '198.51.100.2'), 409, 'conflict');
    expectRateLimited(await attempt('taken@example.com', 'third', '198.51.100.3'));
    expect((await attempt('x1@example.com', 'x1_user')).statusCode).toBe(201);
    expect((await attempt('x2@example.com', 'x2_user')).statusCode).toBe(201);
    expectRateLimited(await attempt('x3@example.com', 'x3_user'));
  });
});

describe('RATE_LIMITS=off', () => {
  it('sends no RateLimit fields and never 429s', async () => {
    t = await startTestApp({ env: { RATE_LIMITS: 'off' } });
    const res = await get(t, '/.well-known/jwks.json');
    expect(res.headers).not.toHaveProperty('ratelimit');
    expect(res.headers).not.toHaveProperty('ratelimit-policy');
  });
});
