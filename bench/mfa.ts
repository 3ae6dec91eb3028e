import { randomUUID } from 'node:crypto';
import { TotpSecrets } from '../src/account/mfa/totp-secrets.js';
import { newMfaToken } from '../src/account/mfa/mfa-token.js';
import { newTotpSecret, totpCodeAt, totpStep } from '../src/account/mfa/totp.js';
import { loadConfig, parseDatabase } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { rzAuthEnv, type Store } from './env.js';
import { Pace } from './pace.js';

/*
 * `POST /api/auth/mfa/verify` under load. Each request needs an `mfa_token` of its own (single
 * use), and each TOTP factor accepts one code per 30-second step, each later than the last
 * (RFC 6238 §5.2). Getting tokens through the API would cost an argon2id hash each, thousands of
 * times what is measured, so the harness writes them into the store as the password step of a
 * login would (bench/mail.ts does the same for mails), for users it also wrote with an active TOTP
 * factor: the server then does what a second step costs, and nothing else.
 */

/** Users with a factor. Each serves about one request per 30 s step (two right after its last use). */
const USERS = 30_000;
/** How long rz-auth keeps an `mfa_token` (contract §12.4). */
const MFA_TOKEN_TTL_MS = 5 * 60_000;
const BATCH = 500;

export interface SecondFactorLogins {
  /**
   * JSON bodies for one run of `scenario` lasting `seconds`, one per request, each with its own
   * `mfa_token` and a code of its user's factor that rz-auth accepts for at least 30 s. Sized from
   * the pace the scenario's previous run showed.
   */
  bodies(scenario: string, seconds: number): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * Writes {@link USERS} users, each with an active authenticator app (one secret for all: a code is
 * then one HMAC per step, and every factor still has its own row, sealed secret and last step).
 */
export async function prepareSecondFactorLogins(store: Store): Promise<SecondFactorLogins> {
  const env = rzAuthEnv(store);
  const secrets = new TotpSecrets(loadConfig(env).mfa.encryption);
  const database = await openDatabase(parseDatabase(env));
  const { db } = database;
  const secret = newTotpSecret();
  const hash = await db.selectFrom('users').select('password_hash').limit(1).executeTakeFirstOrThrow();
  const users: { id: string; lastStep: number }[] = [];
  const created = new Date().toISOString();
  for (let start = 0; start < USERS; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, USERS - start) }, (_, i) => ({ id: randomUUID(), factor: randomUUID(), n: start + i }));
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('users')
        .values(batch.map(({ id, n }) => ({ id, email: `mfa-${n}@bench.example.com`, username: `mfa_${n}`, username_key: `mfa_${n}`, password_hash: hash.password_hash, created_at: created })))
        .execute();
      await trx
        .insertInto('mfa_factors')
        .values(batch.map(({ id, factor }) => ({ id: factor, user_id: id, type: 'totp' as const, status: 'active' as const, name: 'Bench', created_at: created, pending_until: null, last_used_at: null, totp_secret: secrets.seal(factor, secret), totp_last_step: null, credential_id: null, public_key: null, sign_count: null, transports: null, backup_eligible: null, backup_state: null, discoverable: null, user_verified: null, clone_suspected_at: null })))
        .execute();
    });
    users.push(...batch.map(({ id }) => ({ id, lastStep: 0 })));
  }
  const pace = new Pace(db, 'mfa_pending_logins');

  let next = 0;

  return {
    async bodies(scenario, seconds) {
      const wanted = await pace.wanted(scenario, seconds);
      const now = Date.now();
      const step = totpStep(now);
      // A code for step s is accepted while rz-auth is at s−1 … s+1, and only once per factor: a
      // user last used at `step` gets the next step's code, one used at `step + 1` must wait.
      const codes = new Map([step, step + 1].map((s) => [s, totpCodeAt(secret, s * 30_000)]));
      const chosen: { userId: string; code: string; token: string; digest: string }[] = [];
      for (let tried = 0; tried < users.length && chosen.length < wanted; tried++) {
        const user = users[next] as { id: string; lastStep: number };
        next = (next + 1) % users.length;
        const use = Math.max(user.lastStep + 1, step);
        if (use > step + 1) continue;
        user.lastStep = use;
        chosen.push({ userId: user.id, code: codes.get(use) ?? '', ...newMfaToken() });
      }
      if (chosen.length < wanted) console.warn(`bench/mfa.ts: ${chosen.length} of ${wanted} second-factor logins for ${scenario}: every other factor has taken this step's codes`);
      const createdAt = new Date(now).toISOString();
      const expires = new Date(now + MFA_TOKEN_TTL_MS).toISOString();
      for (let start = 0; start < chosen.length; start += BATCH) {
        const rows = chosen.slice(start, start + BATCH).map(({ digest, userId }) => ({ digest, user_id: userId, created_at: createdAt, expires_at: expires }));
        await db.insertInto('mfa_pending_logins').values(rows).execute();
      }
      pace.started(scenario, expires, chosen.length, seconds);
      return chosen.map(({ token, code }) => JSON.stringify({ mfa_token: token, method: 'totp', code }));
    },
    async close() {
      await database.close();
    },
  };
}
