import { expect } from 'vitest';
import type { Answer, Problem } from '../../types/api.js';
import { PASSWORD } from './api.js';
import { type HttpResult, request } from './server-process.js';

/** The API of a real server process, as the end-to-end tests use it. */

/** A new user (signup over HTTP) and one API token of theirs. */
export async function signupAndToken(base: string): Promise<{ jwt: string; email: string; tokenId: string; token: string }> {
  const email = `e2e-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const signup = await request(base, 'POST', '/api/auth/signup', { body: { email, username: email.slice(0, 12).replace(/[^a-z0-9]/g, '_'), password: PASSWORD } });
  expect(signup.status).toBe(201);
  const jwt = (signup.body as Answer<'signUp', 201>).token;
  const created = await request(base, 'POST', '/api/tokens', { token: jwt, body: { name: 'e2e' } });
  expect(created.status).toBe(201);
  const { id, token } = created.body as Answer<'createApiToken', 201>;
  return { jwt, email, tokenId: id, token };
}

/** The status of GET /api/me with `token`. */
export const status = async (base: string, token: string): Promise<number> => (await request(base, 'GET', '/api/me', { token })).status;

/** What RFC 6750 and the contract make of a refused token: 401 `invalid_token`, the same whatever the reason. */
function expectInvalidToken(answer: HttpResult): void {
  expect(answer.status).toBe(401);
  expect((answer.body as Problem | null)?.code).toBe('invalid_token');
  expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="rz", error="invalid_token"');
}

/** Asserts that `base` refuses `token` on GET /api/me as any invalid token is refused. */
export async function expectRefused(base: string, token: string): Promise<void> {
  expectInvalidToken(await request(base, 'GET', '/api/me', { token }));
}

/**
 * Asks `base` every 50 ms until it refuses `token` (401), and returns how long that took; fails
 * after `deadlineMs`. For changes that arrive within a bound rather than on the next request.
 */
export async function msUntilRefused(base: string, token: string, deadlineMs: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const answer = await request(base, 'GET', '/api/me', { token });
    const elapsed = Date.now() - start;
    if (answer.status === 401) {
      expectInvalidToken(answer);
      return elapsed;
    }
    expect(answer.status).toBe(200);
    if (elapsed > deadlineMs) throw new Error(`${base} still accepted the token after ${elapsed} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
