import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createApiToken, json, signup } from '../helpers/api.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /api/tokens/{id}: origin', () => {
  it('shows origin api, and no client or device, for a token made with POST /api/tokens', async () => {
    const user = await signup(t);
    const token = await createApiToken(t, user.jwt);
    const res = await json(t, 'GET', `/api/tokens/${token.id}`, undefined, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ origin: 'api', client_id: null, device_name: null });
  });
});
