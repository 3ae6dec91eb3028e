import { type AuditEvent, auditEvent, type Details, SYSTEM_CONTEXT } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { DAY_MS, iso } from '../clock.js';
import type { Sweep } from '../maintenance/runner.js';
import type { TokenLifecycleStore } from './lifecycle-store.js';
import { idleCutoff, type TokenPolicy } from './policy.js';
import { tokenDetails } from './service.js';
import type { RevokedToken, TokenRecord } from './store.js';
import type { UsageRecorder } from './usage.js';
import { countedType, type RevokeReason, type TokenCounts } from '../observability/metrics/tokens.js';

/** After a round that revoked something: every instance hears of it now, not at its next poll. */
async function announced(feed: ChangeFeed, revoked: number): Promise<number> {
  if (revoked > 0) await feed.committed('token', 'sweep');
  return revoked;
}

/**
 * The audit event of a token the service itself ended, in its owner's log; the token is counted
 * as its event is made, in the sweep's transaction (a sweep that fails is retried next round).
 */
const bySystem =
  (type: 'token.expired' | 'token.idle_revoked', details: Details, now: number, counted: [TokenCounts | null, RevokeReason]) =>
  (token: RevokedToken): AuditEvent => {
    counted[0]?.revoked(countedType(token.kind), counted[1]);
    return auditEvent({ type, userId: token.userId, subject: { type: 'token', id: token.id }, details: { ...tokenDetails(token), ...details } }, SYSTEM_CONTEXT, now);
  };

/**
 * Rotated tokens whose grace ended are marked revoked, with a `token.revoked` event for the
 * platform's verifiers. Every instance already refuses them by their expiry; this only tells
 * whoever caches answers without checking `exp`. The owner's log gets `token.expired` (the token
 * stopped working when its grace expired), with `reason: rotation_grace_ended`.
 */
export const endedGraces = (store: TokenLifecycleStore, feed: ChangeFeed, counts: TokenCounts | null = null): Sweep => ({
  name: 'rotation graces',
  run: async (now) => announced(feed, await store.revokeEndedGraces(iso(now), bySystem('token.expired', { reason: 'rotation_grace_ended' }, now, [counts, 'rotation']))),
});

/**
 * Tokens that reached the expiry they were created with (or that TOKEN_MAX_LIFETIME_DAYS gave
 * them) are marked revoked in the same way, with `token.expired` and `reason: lifetime_ended` in
 * their owner's log and so to their webhooks: the owner learns that something stopped working.
 */
export const endedLifetimes = (store: TokenLifecycleStore, feed: ChangeFeed, counts: TokenCounts | null = null): Sweep => ({
  name: 'expired tokens',
  run: async (now) => announced(feed, await store.revokeEndedLifetimes(iso(now), bySystem('token.expired', { reason: 'lifetime_ended' }, now, [counts, 'expired']))),
});

/**
 * TOKEN_IDLE_REVOKE_DAYS: tokens unused that long (since creation if never used) are revoked. This
 * instance's unflushed uses are written first, so a token it just saw in use is not taken for idle.
 * Each gets `token.idle_revoked` in its owner's log, with the policy's `idle_days`.
 */
export const idleTokens = (store: TokenLifecycleStore, usage: UsageRecorder, feed: ChangeFeed, policy: TokenPolicy, counts: TokenCounts | null = null): Sweep => ({
  name: 'idle tokens',
  run: async (now) => {
    const cutoff = idleCutoff(now, policy);
    if (cutoff === null) return 0;
    await usage.flush();
    const audit = bySystem('token.idle_revoked', { idle_days: policy.idleRevokeDays }, now, [counts, 'idle']);
    return announced(feed, await store.revokeIdle(iso(cutoff), iso(now), audit));
  },
});

/**
 * `token.expiring`, 7 days and 1 day before a token expires (docs/webhooks.md), in its owner's log and
 * so to their webhooks. The 7-day notice goes to tokens that live longer than 7 days and expire in
 * more than 1 and at most 7 days; the 1-day notice to tokens that live longer than a day and expire
 * within one. A notice may come up to one maintenance interval late; each is recorded once.
 */
export const expiringTokens = (store: TokenLifecycleStore): Sweep => ({
  name: 'expiring tokens',
  run: async (now) => {
    const notice = (days: 7 | 1) => (token: TokenRecord) =>
      auditEvent(
        {
          type: 'token.expiring',
          userId: token.userId,
          subject: { type: 'token', id: token.id },
          details: { ...tokenDetails(token), expires_at: token.expiresAt, days },
        },
        SYSTEM_CONTEXT,
        now,
      );
    const week = await store.noticeExpiring('7d', iso(now + DAY_MS), iso(now + 7 * DAY_MS), 7 * DAY_MS, notice(7));
    const day = await store.noticeExpiring('1d', iso(now), iso(now + DAY_MS), DAY_MS, notice(1));
    return week + day;
  },
});
