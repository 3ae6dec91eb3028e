import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { json, login, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import type { TestApp } from '../helpers/app.js';
import { TestClock } from '../helpers/clock.js';
import { deliver, startMailApp, verifiedUser } from '../helpers/email.js';
import { mfaEnv, mfaToken, verify } from '../helpers/mfa.js';
import type { TestSmtpServer } from '../helpers/smtp.js';
import { type Receiver, startReceiver, verified } from '../helpers/webhooks.js';

const MFA_EVENTS = ['mfa.factor_added', 'mfa.factor_removed', 'mfa.recovery_code_used', 'mfa.recovery_codes_generated', 'mfa.locked', 'mfa.reset_by_operator'];

/**
 * Contract §11.5 and §12.8: a user hears of every change to their second factors by mail (the
 * real SMTP server in-process) and by webhook (a real receiver), and the sessions a removal ends
 * are `session.revoked` events of the stream.
 */
describe('second-factor notices by mail and webhook', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let receiver: Receiver;
  const clock = new TestClock(Date.now());
  beforeAll(async () => {
    receiver = await startReceiver();
    ({ t, smtp } = await startMailApp({ clock, env: { ...mfaEnv(), WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_SECONDS: '5' } }));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
    await receiver.close();
  });

  /** A verified user with a webhook endpoint for the second-factor events at /<user id>. */
  async function hooked(): Promise<{ user: TestUser; secret: string }> {
    const user = await verifiedUser(t, smtp);
    const res = await json(t, 'POST', '/api/webhooks', { url: `${receiver.url}/${user.id}`, event_types: MFA_EVENTS }, user.jwt);
    expect(res.statusCode, res.body).toBe(201);
    return { user, secret: (res.json() as { secret: string }).secret };
  }
  /** Adds an authenticator app through the routes; the clock then moves one step on. */
  async function enrol(user: TestUser, name: string): Promise<{ secret: string; factorId: string; codes: string[] }> {
    const started = (await json(t, 'POST', '/api/me/mfa/totp', undefined, user.jwt)).json() as { factor_id: string; secret: string };
    const res = await json(t, 'POST', `/api/me/mfa/totp/${started.factor_id}/confirm`, { code: totpCodeAt(started.secret, clock.now()), name }, user.jwt);
    expect(res.statusCode, res.body).toBe(200);
    clock.advance(30_000);
    // What the enrolment sent is out of the way of the next test step.
    await deliver(t, smtp);
    await t.services.webhookDelivery.runOnce();
    return { secret: started.secret, factorId: started.factor_id, codes: (res.json() as { recovery_codes: string[] }).recovery_codes };
  }
  /** The event types the user's endpoint received since `seen`, checked against their signature. */
  async function hooks(user: TestUser, secret: string, seen: number): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
    await t.services.webhookDelivery.runOnce();
    return receiver.answered
      .filter((r) => r.path === `/${user.id}`)
      .slice(seen)
      .map((r) => verified(secret, r));
  }
  const received = (user: TestUser) => receiver.answered.filter((r) => r.path === `/${user.id}`).length;

  it('a factor added: a notice naming it (escaped in HTML), mfa.factor_added to the webhook; the first recovery codes add an event but no second notice', async () => {
    const { user, secret } = await hooked();
    const [seenMail, seenHooks] = [smtp.messages.length, received(user)];
    await enrol(user, 'Phone <b>&</b>');
    const mails = smtp.messages.slice(seenMail);
    expect(mails.map((m) => [m.envelope.to, m.subject])).toEqual([[[user.email], 'A second factor was added to your account']]);
    expect(mails[0]?.text).toContain('Phone <b>&</b>');
    expect(mails[0]?.html).toContain('Phone &lt;b&gt;&amp;&lt;/b&gt;');
    expect(mails[0]?.links.every((l) => l === 'https://auth.example.com/developers')).toBe(true);
    const events = await hooks(user, secret, seenHooks);
    expect(events.map((e) => e.type)).toEqual(['mfa.factor_added', 'mfa.recovery_codes_generated']);
    expect(events[0]?.data).toMatchObject({ details: { method: 'totp', name: 'Phone <b>&</b>' } });
  });

  it('recovery codes regenerated, then one used at login and one at step-up: a notice and a webhook event each, never a code', async () => {
    const { user, secret } = await hooked();
    const { codes: first, secret: totp } = await enrol(user, 'Phone');
    const [seenMail, seenHooks] = [smtp.messages.length, received(user)];
    const stepped = ((await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: totpCodeAt(totp, clock.now()) }, user.jwt)).json() as { token: string }).token;
    clock.advance(30_000);
    const regenerated = await json(t, 'POST', '/api/me/mfa/recovery-codes', undefined, stepped);
    expect(regenerated.statusCode, regenerated.body).toBe(200);
    const codes = (regenerated.json() as { recovery_codes: string[] }).recovery_codes;
    const loggedIn = await verify(t, await mfaToken(t, user.email, PASSWORD), 'recovery_code', codes[0] ?? '');
    expect(loggedIn.statusCode, loggedIn.body).toBe(200);
    const jwt = (loggedIn.json() as { token: string }).token;
    expect((await json(t, 'POST', '/api/auth/reauth', { method: 'recovery_code', code: codes[1] }, jwt)).statusCode).toBe(200);
    const mails = await deliver(t, smtp, seenMail);
    expect(mails.map((m) => m.subject)).toEqual(['New recovery codes were made for your account', 'A recovery code of yours was used', 'A recovery code of yours was used']);
    expect(mails[1]?.text).toContain('Codes left: 9.');
    expect(mails[2]?.text).toContain('Codes left: 8.');
    const everything = mails.map((m) => `${m.text}${m.html}`).join('');
    for (const code of [...codes, ...first]) expect(everything).not.toContain(code);
    const events = await hooks(user, secret, seenHooks);
    expect(events.map((e) => e.type)).toEqual(['mfa.recovery_codes_generated', 'mfa.recovery_code_used', 'mfa.recovery_code_used']);
    expect(events[2]?.data).toMatchObject({ details: { method: 'recovery_code', recovery_codes_remaining: 8 } });
  });

  it('a factor removed: a notice naming it, mfa.factor_removed, and session.revoked on the event stream for each other session ended', async () => {
    const { user, secret } = await hooked();
    const { secret: totp } = await enrol(user, 'Old phone');
    // With a factor the login takes two steps: two other sessions, opened the way the user would.
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await verify(t, await mfaToken(t, user.email, PASSWORD), 'totp', totpCodeAt(totp, clock.now()));
      expect(res.statusCode, res.body).toBe(200);
      sessions.push(((await json(t, 'GET', '/api/me', undefined, (res.json() as { token: string }).token)).json() as { auth: { token_id: string } }).auth.token_id);
      clock.advance(30_000);
    }
    const fresh = await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: totpCodeAt(totp, clock.now()) }, user.jwt);
    expect(fresh.statusCode, fresh.body).toBe(200);
    const jwt = (fresh.json() as { token: string }).token;
    const factorId = ((await json(t, 'GET', '/api/me/mfa', undefined, jwt)).json() as { factors: Array<{ id: string }> }).factors[0]?.id;
    const [seenMail, seenHooks] = [smtp.messages.length, received(user)];
    const changesBefore = await t.services.database.db.selectFrom('changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
    expect((await json(t, 'DELETE', `/api/me/mfa/${factorId}`, undefined, jwt)).statusCode).toBe(204);
    const mails = await deliver(t, smtp, seenMail);
    expect(mails.map((m) => [m.envelope.to, m.subject])).toEqual([[[user.email], 'A second factor was removed from your account']]);
    expect(mails[0]?.text).toContain('Old phone');
    const events = await hooks(user, secret, seenHooks);
    expect(events.map((e) => e.type)).toEqual(['mfa.factor_removed']);
    expect(events[0]?.data).toMatchObject({ details: { sessions_ended: 2 } });
    // What GET /api/events sends: the change log's events, one session.revoked per session ended.
    const rows = await t.services.database.db.selectFrom('changes').select('event').where('id', '>', Number(changesBefore.id ?? 0)).where('kind', '=', 'session').execute();
    const stream = rows.map((r) => JSON.parse(r.event ?? 'null') as { type: string; data: { session_id: string; user_id: string } });
    expect(stream.map((e) => e.type)).toEqual(['session.revoked', 'session.revoked']);
    expect(stream.map((e) => e.data.session_id).sort()).toEqual([...sessions].sort());
    expect(stream.every((e) => e.data.user_id === user.id)).toBe(true);
    for (const id of sessions) expect((await t.services.audit.list({ userId: user.id, type: 'session.revoked', limit: 10 })).map((e) => e.subject?.id)).toContain(id);
    expect((await json(t, 'GET', '/api/me', undefined, jwt)).statusCode).toBe(200);
  });

  it('10 failed second factors: the user is locked, told by mail with the time, and by mfa.locked, once', async () => {
    const { user, secret } = await hooked();
    const { secret: totp } = await enrol(user, 'Phone');
    const wrong = totpCodeAt(totp, clock.now()) === '000000' ? '111111' : '000000';
    const [seenMail, seenHooks] = [smtp.messages.length, received(user)];
    for (let i = 0; i < 10; i++) expect((await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: wrong }, user.jwt)).statusCode).toBe(401);
    expect((await json(t, 'POST', '/api/auth/reauth', { method: 'totp', code: wrong }, user.jwt)).statusCode).toBe(429);
    const mails = await deliver(t, smtp, seenMail);
    expect(mails.map((m) => m.subject)).toEqual(['Second factor checks of your account were locked']);
    const events = await hooks(user, secret, seenHooks);
    expect(events.map((e) => e.type)).toEqual(['mfa.locked']);
    const lockedUntil = (events[0]?.data as { details: { locked_until: string } }).details.locked_until;
    expect(mails[0]?.text).toContain(lockedUntil);
  });

  it('no mail to an address nobody proved; the webhook event still goes out', async () => {
    const user = await signup(t);
    await deliver(t, smtp);
    const res = await json(t, 'POST', '/api/webhooks', { url: `${receiver.url}/${user.id}`, event_types: MFA_EVENTS }, user.jwt);
    const seenMail = smtp.messages.length;
    await enrol(user, 'Phone');
    expect(smtp.messages.slice(seenMail)).toEqual([]);
    expect((await hooks(user, (res.json() as { secret: string }).secret, 0)).map((e) => e.type)).toEqual(['mfa.factor_added', 'mfa.recovery_codes_generated']);
  });

  it('the operator reset: every factor and recovery code gone, every session ended (session.revoked each), mfa.reset_by_operator and a notice', async () => {
    const { user, secret } = await hooked();
    await enrol(user, 'Phone');
    const [seenMail, seenHooks] = [smtp.messages.length, received(user)];
    const outcome = await t.services.mfa.operatorReset.reset(user.username.toUpperCase());
    expect(outcome).toEqual({ userId: user.id, username: user.username, factorsRemoved: 1, sessionsEnded: 1 });
    expect((await json(t, 'GET', '/api/me', undefined, user.jwt)).statusCode).toBe(401);
    const again = await login(t, user.email, PASSWORD);
    expect(((await json(t, 'GET', '/api/me/mfa', undefined, again)).json() as { factors: unknown[]; recovery_codes_remaining: number })).toMatchObject({ factors: [], recovery_codes_remaining: 0 });
    const mails = await deliver(t, smtp, seenMail);
    expect(mails.map((m) => [m.envelope.to, m.subject])).toEqual([[[user.email], 'The second factors of your account were removed']]);
    const events = await hooks(user, secret, seenHooks);
    expect(events.map((e) => e.type)).toEqual(['mfa.reset_by_operator']);
    expect(events[0]?.data).toMatchObject({ actor: { type: 'operator', id: null }, details: { factors_removed: 1, sessions_ended: 1 } });
    const revoked = await t.services.audit.list({ userId: user.id, type: 'session.revoked', limit: 5 });
    expect(revoked.map((e) => e.details)).toEqual([{ reason: 'mfa_reset' }]);
    expect(await t.services.mfa.operatorReset.reset('nobody@example.com')).toBeNull();
  });
});
