import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { json, signup } from '../helpers/api.js';
import { metricsEnv, registryOf, valueOf } from '../helpers/metrics.js';
import { approve, DEVICE_ENV, form, poll, requestDevice } from '../helpers/device.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { ...DEVICE_ENV, ...(await metricsEnv()) } });
});
afterAll(() => t.close());

describe('device flow metrics (contract §10)', () => {
  it('counts requests by outcome, failed lookups, device_flow tokens and self-revocations', async () => {
    const registry = registryOf(t);
    const user = await signup(t);
    const approved = await requestDevice(t);
    const denied = await requestDevice(t);
    await approve(t, user.jwt, approved.user_code);
    expect((await json(t, 'POST', '/api/device/deny', { user_code: denied.user_code }, user.jwt)).statusCode).toBe(204);
    expect((await json(t, 'POST', '/api/device/lookup', { user_code: 'BBBB-BBBB' }, user.jwt)).statusCode).toBe(404);
    const { access_token: value } = (await poll(t, approved.device_code)).json() as { access_token: string };
    expect((await form(t, '/oauth/revoke', { token: value })).statusCode).toBe(200);

    expect(await valueOf(registry, 'rz_device_requests_total', { outcome: 'requested' })).toBe(2);
    expect(await valueOf(registry, 'rz_device_requests_total', { outcome: 'approved' })).toBe(1);
    expect(await valueOf(registry, 'rz_device_requests_total', { outcome: 'denied' })).toBe(1);
    expect(await valueOf(registry, 'rz_device_requests_total', { outcome: 'redeemed' })).toBe(1);
    expect(await valueOf(registry, 'rz_device_lookup_failures_total')).toBe(1);
    expect(await valueOf(registry, 'rz_tokens_created_total', { token_type: 'api_token', origin: 'device_flow' })).toBe(1);
    expect(await valueOf(registry, 'rz_tokens_revoked_total', { token_type: 'api_token', reason: 'self' })).toBe(1);
  });
});
