import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, json, registerApp, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { scopesFileEnv } from '../helpers/scopes.js';

/**
 * Three refusals named a rule of the schema ("must be an ISO 8601 date-time", "is not one of the
 * allowed values", body "must be an object") where the caller had meant something plain: each now
 * names the field and the fix. Status and code are as before: 400 validation_failed.
 */
describe('refusals say what the caller meant, and the fix', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: scopesFileEnv(mkdtempSync(join(tmpdir(), 'rz-errors-'))) });
    user = await signup(t);
  });
  afterAll(() => t.close());

  const refusal = async (method: 'POST' | 'DELETE', url: string, body: unknown) => {
    const res = await json(t, method, url, body, user.jwt);
    expectProblem(res, 400, 'validation_failed');
    return (res.json() as { errors: Array<{ field: string; message: string }> }).errors;
  };

  it('a date-only expires_at was "must be an ISO 8601 date-time": now asks for the time and zone, with the date given', async () => {
    expect(await refusal('POST', '/api/tokens', { name: 'ci', expires_at: '2099-01-31' })).toEqual([
      { field: 'expires_at', message: 'must be a date-time with a time zone, such as 2099-01-31T00:00:00Z; a date alone is not accepted' },
    ]);
  });

  it('an app token scope asked for an API token was "not one of the allowed values": now says it is for app tokens only', async () => {
    const [error] = await refusal('POST', '/api/tokens', { name: 'ci', scopes: ['games:publish', 'scores:write'] });
    expect(error?.field).toBe('scopes.1');
    expect(error?.message).toMatch(/^scores:write is a scope for app tokens only: remove it, or ask for it on the other kind of token/);
  });

  it('an API token scope asked for an app token: says it is for API tokens only', async () => {
    const app = await registerApp(t, user.jwt);
    const [error] = await refusal('POST', `/api/apps/${app.id}/tokens`, { scopes: ['catalogue:admin:read'] });
    expect(error).toMatchObject({ field: 'scopes.0', message: expect.stringMatching(/^catalogue:admin:read is a scope for API tokens only/) });
  });

  it('a scope that is no scope at all keeps its plain refusal', async () => {
    expect(await refusal('POST', '/api/tokens', { name: 'ci', scopes: ['nope:nope'] })).toEqual([{ field: 'scopes.0', message: 'is not one of the allowed values' }]);
  });

  it('DELETE /api/me without a body was body "must be an object": now names the body it needs', async () => {
    expect(await refusal('DELETE', '/api/me', undefined)).toEqual([{ field: 'body', message: 'is missing: DELETE /api/me needs a JSON body {"password": …}' }]);
    // A body without the field still names the field.
    expect(await refusal('DELETE', '/api/me', {})).toEqual([{ field: 'password', message: 'is required' }]);
  });
});
