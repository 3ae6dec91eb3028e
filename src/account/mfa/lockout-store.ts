import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';

/** A reserved attempt: the window it counts in, and how many the window holds with it. */
export interface Reservation {
  readonly windowStart: string;
  readonly attempts: number;
}

/** The user may not try again before `until` (the window's end): 429 with Retry-After. */
export interface Locked {
  readonly lockedUntil: string;
}

/**
 * Per-user second-factor attempts (contract §12.6: 10 per 15 minutes across login, step-up and
 * enrolment confirmation, whatever the client address). Each check reserves an attempt before the
 * code is compared and gives it back only on success, so N parallel guesses against a limit L get
 * at most L comparisons (the lock-out bypass of GHSA-7h8m-vrxx-vr4m came from counting after).
 */
export interface LockoutStore {
  /** Reserves one attempt in one statement, or says until when the user is locked. */
  reserve(userId: string, nowMs: number, windowMs: number, limit: number): Promise<Reservation | Locked>;
  /** Gives back a reservation after a successful check. */
  release(userId: string, reservation: Reservation): Promise<void>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export class SqlLockoutStore implements LockoutStore {
  constructor(private readonly db: Kysely<Tables>) {}

  async reserve(userId: string, nowMs: number, windowMs: number, limit: number): Promise<Reservation | Locked> {
    const now = iso(nowMs);
    const cutoff = iso(nowMs - windowMs);
    // A window older than `windowMs` starts over at this attempt; a current one counts up to `limit`.
    // The conditional upsert is the reservation: a row it does not update or insert is a refusal.
    const row = await this.db
      .insertInto('mfa_lockouts')
      .values({ user_id: userId, window_start: now, attempts: 1 })
      .onConflict((oc) =>
        oc
          .column('user_id')
          .doUpdateSet((eb) => {
            const expired = eb('mfa_lockouts.window_start', '<=', cutoff);
            return {
              window_start: eb.case().when(expired).then(now).else(eb.ref('mfa_lockouts.window_start')).end(),
              attempts: eb.case().when(expired).then(1).else(eb('mfa_lockouts.attempts', '+', 1)).end(),
            };
          })
          .where((eb) => eb.or([eb('mfa_lockouts.window_start', '<=', cutoff), eb('mfa_lockouts.attempts', '<', limit)])),
      )
      .returning(['window_start', 'attempts'])
      .executeTakeFirst();
    if (row) return { windowStart: row.window_start, attempts: Number(row.attempts) };
    const held = await this.db.selectFrom('mfa_lockouts').select('window_start').where('user_id', '=', userId).executeTakeFirst();
    return { lockedUntil: iso(Date.parse(held?.window_start ?? now) + windowMs) };
  }

  async release(userId: string, reservation: Reservation): Promise<void> {
    // Only within the window it was taken in: a window that started over owes it nothing.
    await this.db
      .updateTable('mfa_lockouts')
      .set((eb) => ({ attempts: eb('attempts', '-', 1) }))
      .where('user_id', '=', userId)
      .where('window_start', '=', reservation.windowStart)
      .where('attempts', '>', 0)
      .execute();
  }
}
