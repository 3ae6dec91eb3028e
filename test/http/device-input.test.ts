import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createApiToken, json, signup } from '../helpers/api.js';
import { DEVICE_ENV, form, poll, requestDevice } from '../helpers/device.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { ...DEVICE_ENV } });
});
afterAll(() => t.close());

const errorOf = (res: { json(): unknown }) => (res.json() as { error: string }).error;
const pendingCount = async () => t.services.device.requests.count();

describe('POST /oauth/device_authorization: input (contract §13.5)', () => {
  it('a parameter given twice → invalid_request, nothing stored', async () => {
    const before = await pendingCount();
    const res = await form(t, '/oauth/device_authorization', 'client_id=rz-cli&client_id=rz-cli');
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toBe('invalid_request');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await pendingCount()).toBe(before);
  });

  it('unknown parameters are ignored, and a parameter without a value is omitted', async () => {
    const res = await form(t, '/oauth/device_authorization', 'client_id=rz-cli&foo=bar&scope=&device_name&x%5B%5D=1');
    expect(res.statusCode, res.body).toBe(200);
  });

  it('JSON and form bodies are equivalent', async () => {
    const viaJson = await json(t, 'POST', '/oauth/device_authorization', { client_id: 'rz-cli', scope: 'apps:read', device_name: 'box', unknown: { a: 1 } });
    expect(viaJson.statusCode, viaJson.body).toBe(200);
    const badJson = await json(t, 'POST', '/oauth/device_authorization', { client_id: 'rz-cli', scope: 'nope:nope' });
    const badForm = await form(t, '/oauth/device_authorization', { client_id: 'rz-cli', scope: 'nope:nope' });
    expect([badJson.statusCode, errorOf(badJson)]).toEqual([400, 'invalid_scope']);
    expect([badForm.statusCode, errorOf(badForm)]).toEqual([400, 'invalid_scope']);
  });

  it('16 KiB + 1 → 413 problem', async () => {
    const res = await form(t, '/oauth/device_authorization', `client_id=rz-cli&pad=${'a'.repeat(16 * 1024)}`);
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it.each([['65 characters', 'x'.repeat(65)], ['a control character', 'ada\u0007laptop'], ['a line break', 'ada\nlaptop']])('device_name with %s → 400 invalid_request', async (_what, name) => {
    const res = await form(t, '/oauth/device_authorization', { client_id: 'rz-cli', device_name: name });
    expect(res.statusCode).toBe(400);
    expect(errorOf(res)).toBe('invalid_request');
  });

  it('a 64-character device name is taken, trimmed', async () => {
    const res = await form(t, '/oauth/device_authorization', { client_id: 'rz-cli', device_name: ` ${'y'.repeat(64)} ` });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('missing client_id → 400 invalid_request; unknown or disabled client → 401 invalid_client', async () => {
    expect(errorOf(await form(t, '/oauth/device_authorization', { scope: 'apps:read' }))).toBe('invalid_request');
    const unknown = await form(t, '/oauth/device_authorization', { client_id: 'no-such-client' });
    expect([unknown.statusCode, errorOf(unknown)]).toEqual([401, 'invalid_client']);
    await t.services.device.clients.create({ id: 'game-cli', name: 'Game CLI', scopes: ['apps:read'] });
    await t.services.device.clients.setDisabled('game-cli', true);
    const disabled = await form(t, '/oauth/device_authorization', { client_id: 'game-cli' });
    expect([disabled.statusCode, errorOf(disabled)]).toEqual([401, 'invalid_client']);
  });

  it("a scope outside the client's ceiling → invalid_scope and nothing stored", async () => {
    await t.services.device.clients.create({ id: 'ceiling-cli', name: 'Ceiling', scopes: ['apps:read'], defaultScopes: ['apps:read'] });
    const before = await pendingCount();
    const res = await form(t, '/oauth/device_authorization', { client_id: 'ceiling-cli', scope: 'apps:read tokens:read' });
    expect([res.statusCode, errorOf(res)]).toEqual([400, 'invalid_scope']);
    expect(await pendingCount()).toBe(before);
    expect((await form(t, '/oauth/device_authorization', { client_id: 'ceiling-cli' })).statusCode).toBe(200);
  });
});

describe('the approval API: who may approve', () => {
  it('API tokens are refused with 403 insufficient_scope; no token → 401', async () => {
    const user = await signup(t);
    const { token } = await createApiToken(t, user.jwt, { scopes: ['apps:read', 'apps:write', 'tokens:read'] });
    const codes = await requestDevice(t);
    for (const path of ['/api/device/lookup', '/api/device/approve', '/api/device/deny']) {
      const res = await json(t, 'POST', path, { user_code: codes.user_code }, token);
      expect(res.statusCode, path).toBe(403);
      expect((res.json() as { code: string }).code).toBe('insufficient_scope');
      expect((await json(t, 'POST', path, { user_code: codes.user_code })).statusCode).toBe(401);
    }
  });

  it('a logged-out session\'s JWT → 401', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    expect((await json(t, 'POST', '/api/auth/logout', undefined, user.jwt)).statusCode).toBe(204);
    expect((await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt)).statusCode).toBe(401);
  });

  it('approve with a scope not requested → 400 validation_failed naming scopes; the token carries requested ∩ approved', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t, { scope: 'apps:read' });
    const res = await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code, scopes: ['apps:read', 'tokens:read'] }, user.jwt);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ field: 'scopes' }] });
  });

  it('lookup by user A then approve by user B binds B', async () => {
    const a = await signup(t);
    const b = await signup(t);
    const codes = await requestDevice(t);
    expect((await json(t, 'POST', '/api/device/lookup', { user_code: codes.user_code }, a.jwt)).statusCode).toBe(200);
    expect((await json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, b.jwt)).statusCode).toBe(204);
    const events = await json(t, 'GET', '/api/audit?type=device.approved', undefined, b.jwt);
    expect((events.json() as { events: unknown[] }).events).toHaveLength(1);
  });

  it('approve and deny racing → exactly one wins, the other 404', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    const [approved, denied] = await Promise.all([
      json(t, 'POST', '/api/device/approve', { user_code: codes.user_code }, user.jwt),
      json(t, 'POST', '/api/device/deny', { user_code: codes.user_code }, user.jwt),
    ]);
    expect([approved.statusCode, denied.statusCode].sort()).toEqual([204, 404]);
  });

  it('unknown, decided and malformed codes → the same 404', async () => {
    const user = await signup(t);
    const codes = await requestDevice(t);
    await json(t, 'POST', '/api/device/deny', { user_code: codes.user_code }, user.jwt);
    const bodies = [];
    for (const code of [codes.user_code, 'BCDF-GHJK', 'AAAA-AAAA', 'x']) {
      const res = await json(t, 'POST', '/api/device/lookup', { user_code: code }, user.jwt);
      expect(res.statusCode, code).toBe(404);
      bodies.push(res.body.replace(/"request_id":"[^"]*"/, ''));
    }
    expect(new Set(bodies).size).toBe(1);
  });
});

describe('registered clients (contract §13.3)', () => {
  it('disabling a client makes its pending requests expired_token on the next poll; enabling lets new requests in again', async () => {
    await t.services.device.clients.create({ id: 'toggle-cli', name: 'Toggle CLI', scopes: ['apps:read'] });
    const codes = await requestDevice(t, { client_id: 'toggle-cli' });
    expect(await t.services.device.clients.setDisabled('toggle-cli', true)).toBe(true);
    const res = await poll(t, codes.device_code, 'toggle-cli');
    expect([res.statusCode, errorOf(res)]).toEqual([400, 'expired_token']);
    expect(await t.services.device.clients.setDisabled('toggle-cli', false)).toBe(true);
    await requestDevice(t, { client_id: 'toggle-cli' });
    const audit = await t.services.database.db.selectFrom('audit_events').select('type').where('subject_id', '=', 'toggle-cli').execute();
    expect(audit.map((e) => e.type).sort()).toEqual(['client.created', 'client.disabled', 'client.enabled']);
  });

  it('refuses a bad id, a long name and unknown scopes', async () => {
    for (const input of [
      { id: 'X', name: 'n', scopes: [] },
      { id: 'good-id', name: 'n'.repeat(61), scopes: [] },
      { id: 'good-id', name: 'n', scopes: ['no:such'] },
      { id: 'rz-cli', name: 'n', scopes: [] },
    ]) await expect(t.services.device.clients.create(input)).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
