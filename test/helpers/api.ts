import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Answer } from '../../types/api.js';
import type { TestApp } from './app.js';

export const PASSWORD = 'correct horse battery staple';

export interface TestUser {
  readonly id: string;
  readonly email: string;
  readonly username: string;
  readonly password: string;
  /** A user token (JWT) from signup. */
  readonly jwt: string;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Replaces the character at `i` (negative counts from the end) with another base62 character: never the one already there. */
export function flip(s: string, i: number): string {
  const at = i < 0 ? s.length + i : i;
  return s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
}

/** A JSON request with the right content type. */
export function json(t: TestApp, method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, body?: unknown, token?: string, remoteAddress?: string) {
  return t.inject({
    method,
    url,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? bearer(token) : {}) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  });
}

/** Signs up a new user with unique email and username. */
export async function signup(t: TestApp, overrides: Partial<{ email: string; username: string; password: string }> = {}): Promise<TestUser> {
  const tag = randomUUID().slice(0, 8);
  const body = { email: `user-${tag}@example.com`, username: `user_${tag}`, password: PASSWORD, ...overrides };
  const res = await json(t, 'POST', '/api/auth/signup', body);
  expect(res.statusCode, res.body).toBe(201);
  const { token, user } = res.json() as Answer<'signUp', 201>;
  return { id: user.id, email: user.email, username: user.username, password: body.password, jwt: token };
}

export async function login(t: TestApp, email: string, password = PASSWORD): Promise<string> {
  const res = await json(t, 'POST', '/api/auth/login', { email, password });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Answer<'logIn'>).token;
}

export type CreatedApiToken = Answer<'createApiToken', 201>;

export async function createApiToken(t: TestApp, jwt: string, body: Record<string, unknown> = {}): Promise<CreatedApiToken> {
  const res = await json(t, 'POST', '/api/tokens', { name: 'test token', ...body }, jwt);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as CreatedApiToken;
}

export type RegisteredApp = Answer<'registerApp', 201>;

export async function registerApp(t: TestApp, jwt: string, body: Record<string, unknown> = {}): Promise<RegisteredApp> {
  const res = await json(t, 'POST', '/api/apps', { name: 'Test App', description: 'for tests', ...body }, jwt);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as RegisteredApp;
}

/** Asserts an RFC 9457 problem response with the given status and code. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ status, code, type: `/problems/${code.replaceAll('_', '-')}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.request_id).toBe(res.headers['x-request-id']);
  return body;
}

export const REALM = 'Bearer realm="rz"';
export const INVALID_TOKEN_CHALLENGE = 'Bearer realm="rz", error="invalid_token"';

/** 401 invalid_token with the RFC 6750 challenge. */
export function expectInvalidToken(res: LightMyRequestResponse): void {
  expectProblem(res, 401, 'invalid_token');
  expect(res.headers['www-authenticate']).toBe(INVALID_TOKEN_CHALLENGE);
}

/** 401 unauthorized (no credentials) with the bare challenge. */
export function expectUnauthorized(res: LightMyRequestResponse): void {
  expectProblem(res, 401, 'unauthorized');
  expect(res.headers['www-authenticate']).toBe(REALM);
}

/** 403 insufficient_scope naming the scope needed. */
export function expectInsufficientScope(res: LightMyRequestResponse, scope: string): void {
  expectProblem(res, 403, 'insufficient_scope');
  expect(res.headers['www-authenticate']).toBe(`${REALM}, error="insufficient_scope", scope="${scope}"`);
}
