import { auditEvent, OPERATOR_CONTEXT, type RequestContext } from '../../audit/events.js';
import type { ChangeFeed } from '../../changes/feed.js';
import { type Clock, iso } from '../../clock.js';
import { sessionsEnded } from '../security-service.js';
import { revokeAndRecord } from '../session-store.js';
import { normalizeEmail } from '../user-service.js';
import type { UserStore } from '../user-store.js';
import type { FactorStore } from './factor-store.js';
import type { MfaEvents } from './mfa-events.js';

export interface MfaResetDeps {
  readonly factors: FactorStore;
  readonly users: UserStore;
  readonly events: MfaEvents;
  readonly feed: ChangeFeed;
  readonly clock: Clock;
}

/** What a reset did, for the operator. */
export interface MfaResetOutcome {
  readonly userId: string;
  readonly username: string;
  readonly factorsRemoved: number;
  readonly sessionsEnded: number;
}

/**
 * `rz-auth users mfa-reset` (contract §12.3): for a user locked out of their second factors, every
 * factor, recovery code and waiting login goes, and every session ends, in one transaction with
 * the audit event `mfa.reset_by_operator` (the user's webhook) and the notice mailed to the user.
 * Whoever holds a session of the account must log in again, with the password alone.
 */
export class MfaOperatorReset {
  constructor(private readonly deps: MfaResetDeps) {}

  /** The user named by email (it has an `@`) or username; null when there is none. */
  async reset(login: string, context: RequestContext = OPERATOR_CONTEXT): Promise<MfaResetOutcome | null> {
    const user = login.includes('@') ? await this.deps.users.findByEmail(normalizeEmail(login)) : await this.deps.users.findByUsername(login.trim());
    if (!user) return null;
    const now = this.deps.clock.now();
    const subject = { type: 'user' as const, id: user.id };
    let ended: string[] = [];
    const factorsRemoved = await this.deps.factors.removeAll(user.id, async (trx, removed) => {
      ended = await revokeAndRecord(trx, user.id, iso(now), {}, (revoked) => sessionsEnded(user.id, revoked, 'mfa_reset', context, now));
      const event = auditEvent({ type: 'mfa.reset_by_operator', userId: user.id, subject, details: { factors_removed: removed, sessions_ended: ended.length } }, context, now);
      await this.deps.events.record(event, user.id, 'mfa_reset', {}, trx);
    });
    // Every instance drops the ended sessions from its caches before this returns.
    if (ended[0] !== undefined) await this.deps.feed.committed('session', ended[0]);
    return { userId: user.id, username: user.username, factorsRemoved, sessionsEnded: ended.length };
  }
}
