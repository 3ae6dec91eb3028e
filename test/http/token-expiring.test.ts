import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiToken, json, signup, type TestUser } from '../helpers/api.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Contract §9: `token.expiring` 7 days and 1 day before a token expires, recorded by the maintenance
 * sweep (once, however often it runs) and so sent to webhooks. Driven by a clock the test moves.
 */
describe('token.expiring', () => {
  let t: TestApp;
  let user: TestUser;
  const clock = new TestClock();
  const start = clock.now();
  const iso = (ms: number) => new Date(ms).toISOString();

  beforeAll(async () => {
    t = await startTestApp({ clock });
    user = await signup(t);
  });
  afterAll(() => t.close());

  /** Read through the service: the user's JWT expires long before the clock is done moving. */
  const notices = async () => (await t.services.audit.list({ userId: user.id, type: 'token.expiring', limit: 50 })).reverse();
  const sweep = async () => {
    // Two sweeps at once (two instances) record each notice once between them.
    await Promise.all([t.services.maintenance.runOnce(), t.services.maintenance.runOnce()]);
    return (await notices()).map((e) => `${e.subject?.id ?? ''}:${String(e.details.days)}`);
  };

  it('notifies 7 days before for tokens living longer than 7 days, 1 day before for those living longer than a day, active ones only', async () => {
    const long = await createApiToken(t, user.jwt, { name: 'deploy', expires_at: iso(start + 10 * DAY) });
    const medium = await createApiToken(t, user.jwt, { expires_at: iso(start + 5 * DAY) });
    await createApiToken(t, user.jwt, { expires_at: iso(start + 20 * HOUR) });
    const revoked = await createApiToken(t, user.jwt, { expires_at: iso(start + 8 * DAY) });
    await json(t, 'DELETE', `/api/tokens/${revoked.id}`, undefined, user.jwt);
    await createApiToken(t, user.jwt);
    const hook = await json(t, 'POST', '/api/webhooks', { url: 'https://93.184.215.14/hooks', event_types: ['token.expiring'] }, user.jwt);
    const hookId = (hook.json() as { id: string }).id;

    expect(await sweep()).toEqual([]);
    clock.advance(3 * DAY + 1);
    // `long` now expires within 7 days; `medium` in under 2, but it never lived longer than 7.
    expect(await sweep()).toEqual([`${long.id}:7`]);
    expect(await sweep()).toEqual([`${long.id}:7`]);
    clock.advance(DAY + 12 * HOUR);
    expect(await sweep()).toEqual([`${long.id}:7`, `${medium.id}:1`]);
    clock.advance(5 * DAY);
    expect(await sweep()).toEqual([`${long.id}:7`, `${medium.id}:1`, `${long.id}:1`]);
    clock.advance(2 * DAY);
    expect(await sweep()).toHaveLength(3);

    const [first] = await notices();
    expect(first).toMatchObject({
      type: 'token.expiring',
      actor: { type: 'system', id: null },
      subject: { id: long.id },
      details: { token_type: 'api_token', name: 'deploy', hint: expect.stringMatching(/^rz_[0-9A-Za-z]{4}$/), expires_at: iso(start + 10 * DAY), days: 7 },
    });
    // Each notice is an audit event like any other: it goes to the endpoints that chose its type.
    await t.services.webhookDelivery.dispatcher.runOnce();
    const page = await t.services.webhooks.deliveries(user.id, hookId, {});
    expect(page.deliveries.map((d) => d.eventType)).toEqual(['token.expiring', 'token.expiring', 'token.expiring']);
  });
});
