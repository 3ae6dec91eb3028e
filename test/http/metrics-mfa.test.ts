import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { json, login, PASSWORD, signup, type TestUser } from '../helpers/api.js';
import { TestClock } from '../helpers/clock.js';
import { registryOf, samples, total } from '../helpers/metrics.js';
import { addRecoveryCodes, addTotp, mfaEnv, mfaToken, verify } from '../helpers/mfa.js';

type Labels = Record<string, string>;
type Moves = Array<[metric: string, labels: Labels, by: number]>;

/** Contract §10.3 for second factors: each request moves its series by exactly one, and no other. */
describe('second-factor metrics', () => {
  let t: TestApp;
  const clock = new TestClock();
  let user: TestUser;
  let code: () => string;
  let recovery: string[];

  beforeAll(async () => {
    t = await startTestApp({ clock, env: { ...mfaEnv(), METRICS_ADDR: '127.0.0.1:9464', RATE_LIMITS: 'off' } });
    user = await signup(t);
    code = (await addTotp(t, clock, user.id)).code;
    recovery = await addRecoveryCodes(t, user.id);
  });
  afterAll(() => t.close());

  const expectMoves = async (run: () => Promise<unknown>, moves: Moves) => {
    const registry = registryOf(t);
    const before = await samples(registry);
    await run();
    const after = await samples(registry);
    for (const [metric, labels, by] of moves) expect(total(after, metric, labels) - total(before, metric, labels), `${metric} ${JSON.stringify(labels)}`).toBe(by);
  };
  const logins = (outcome: string, by: number): Moves[number] => ['rz_logins_total', { outcome, method: 'password' }, by];
  const checks = (method: string, outcome: string, by = 1): Moves[number] => ['rz_mfa_verifications_total', { method, outcome }, by];

  it('counts the right password of an account with a factor as mfa_required, not as invalid_credentials', async () => {
    await expectMoves(() => mfaToken(t, user.email, PASSWORD), [logins('mfa_required', 1), logins('invalid_credentials', 0), logins('success', 0)]);
  });

  it('counts the second step: a TOTP check, and the login as a success', async () => {
    const token = await mfaToken(t, user.email, PASSWORD);
    await expectMoves(async () => expect((await verify(t, token, 'totp', code())).statusCode).toBe(200), [checks('totp', 'ok'), logins('success', 1), logins('invalid_credentials', 0)]);
  });

  it('counts a wrong code as failed and a replayed one as replayed, neither as a login', async () => {
    const token = await mfaToken(t, user.email, PASSWORD);
    const wrong = code() === '000000' ? '111111' : '000000';
    await expectMoves(async () => expect((await verify(t, token, 'totp', wrong)).statusCode).toBe(401), [checks('totp', 'failed'), checks('totp', 'replayed', 0), logins('invalid_credentials', 0)]);
    // The step of the previous test's code was used: the same code again is a replay.
    await expectMoves(async () => expect((await verify(t, token, 'totp', code())).statusCode).toBe(401), [checks('totp', 'replayed'), checks('totp', 'failed', 0)]);
  });

  it('counts a recovery code by its method', async () => {
    const token = await mfaToken(t, user.email, PASSWORD);
    await expectMoves(async () => expect((await verify(t, token, 'recovery_code', recovery[0] ?? '')).statusCode).toBe(200), [checks('recovery_code', 'ok'), logins('success', 1)]);
  });

  it('counts a step-up refusal as insufficient_user_authentication and a passed step-up once as ok', async () => {
    // The signup token carries amr ["pwd"]: for an account with a factor, POST /api/tokens needs more.
    const refused = [['rz_auth_decisions_total', { token_type: 'user', outcome: 'insufficient_user_authentication' }, 1], ['rz_auth_decisions_total', { token_type: 'user', outcome: 'ok' }, 0]] satisfies Moves;
    await expectMoves(async () => expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, user.jwt)).statusCode).toBe(401), refused);
    clock.advance(30_000);
    const token = await mfaToken(t, user.email, PASSWORD);
    const strong = (await verify(t, token, 'totp', code())).json().token as string;
    const ok: Moves[number] = ['rz_auth_decisions_total', { token_type: 'user', outcome: 'ok' }, 1];
    const passed: Moves = [ok, ['rz_auth_decisions_total', { token_type: 'user', outcome: 'insufficient_user_authentication' }, 0]];
    await expectMoves(async () => expect((await json(t, 'POST', '/api/tokens', { name: 'ci' }, strong)).statusCode).toBe(201), passed);
    // A refused body on a step-up route is still one decision.
    await expectMoves(async () => expect((await json(t, 'POST', '/api/tokens', { name: 7 }, strong)).statusCode).toBe(400), [ok]);
  });

  it('counts the checks refused while the account is locked as rate_limited', async () => {
    const locked = await signup(t);
    const lockedCode = (await addTotp(t, clock, locked.id)).code;
    const token = () => mfaToken(t, locked.email, PASSWORD);
    const wrong = () => (lockedCode() === '000000' ? '111111' : '000000');
    for (let i = 0; i < 10; i++) expect((await verify(t, await token(), 'totp', wrong())).statusCode).toBe(401);
    await expectMoves(async () => expect((await verify(t, await token(), 'totp', lockedCode())).statusCode).toBe(429), [checks('totp', 'rate_limited'), checks('totp', 'ok', 0)]);
  });

  it('leaves a password-only login as it was', async () => {
    const plain = await signup(t);
    await expectMoves(() => login(t, plain.email), [logins('success', 1), logins('mfa_required', 0)]);
  });
});
