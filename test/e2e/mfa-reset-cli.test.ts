import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCodeAt } from '../../src/account/mfa/totp.js';
import { PASSWORD } from '../helpers/api.js';
import { tempDir } from '../helpers/app.js';
import { openEvents } from '../helpers/event-stream.js';
import { request, runCli, type ServerProcess, spawnServer } from '../helpers/server-process.js';

/**
 * `rz-auth users mfa-reset` as a real process beside a running server on the same SQLite file
 * (contract §12.3, §12.8): the locked-out user's factors go, their sessions end on the very next
 * request and on the event stream, and the password alone logs in again.
 */
describe('rz-auth users mfa-reset', { timeout: 60_000 }, () => {
  const temp = tempDir();
  const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', MFA_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    server = await spawnServer(env);
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    temp.remove();
  });
  const url = () => server?.url ?? '';

  it('removes every factor, ends every session (session.revoked on the stream), audits mfa.reset_by_operator; the password alone logs in again', async () => {
    const email = 'locked-out@example.com';
    const signup = await request(url(), 'POST', '/api/auth/signup', { body: { email, username: 'lockedout', password: PASSWORD } });
    expect(signup.status).toBe(201);
    const { token: jwt } = signup.body as { token: string };
    const started = (await request(url(), 'POST', '/api/me/mfa/totp', { token: jwt })).body as { factor_id: string; secret: string };
    const confirmed = await request(url(), 'POST', `/api/me/mfa/totp/${started.factor_id}/confirm`, { token: jwt, body: { code: totpCodeAt(started.secret, Date.now()) } });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const session = ((await request(url(), 'GET', '/api/me', { token: jwt })).body as { auth: { token_id: string } }).auth.token_id;
    expect((await request(url(), 'POST', '/api/auth/login', { body: { email, password: PASSWORD } })).body).toMatchObject({ code: 'mfa_required' });

    const service = JSON.parse((await runCli(['services', 'create', 'games'], env)).stdout) as { token: string };
    const stream = await openEvents(url(), service.token);
    try {
      await stream.next();
      const res = await runCli(['users', 'mfa-reset', 'LockedOut'], env);
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toEqual({ user_id: expect.any(String), username: 'lockedout', factors_removed: 1, sessions_ended: 1 });
      const event = await stream.nextEvent();
      expect(event.event).toBe('session.revoked');
      expect(JSON.parse(event.data ?? '')).toMatchObject({ session_id: session });
    } finally {
      stream.close();
    }
    expect((await request(url(), 'GET', '/api/me', { token: jwt })).status).toBe(401);
    const again = await request(url(), 'POST', '/api/auth/login', { body: { email, password: PASSWORD } });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const fresh = (again.body as { token: string }).token;
    expect((await request(url(), 'GET', '/api/me/mfa', { token: fresh })).body).toMatchObject({ factors: [], recovery_codes_remaining: 0 });
    const audit = (await request(url(), 'GET', '/api/audit?type=mfa.reset_by_operator', { token: fresh })).body as { events: Array<{ actor: unknown; details: unknown }> };
    expect(audit.events).toEqual([expect.objectContaining({ actor: { type: 'operator', id: null }, details: { factors_removed: 1, sessions_ended: 1 } })]);
  });

  it.each([
    ['an unknown email', ['nobody@example.com'], /no user with that email or username/],
    ['no argument', [], /needs one email or username/],
    ['two arguments', ['a', 'b'], /needs one email or username/],
  ])('%s: exits 2 with a message, changing nothing', async (_name, args, message) => {
    const res = await runCli(['users', 'mfa-reset', ...args], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});
