import type { Transaction } from 'kysely';
import { iso } from '../clock.js';
import type { Tables } from '../db/tables.js';

/** Failed attempts in a row (any of the endpoint's deliveries) that pause an endpoint. */
export const BREAKER_THRESHOLD = 5;
/** The first pause; each failed probe doubles it, up to {@link MAX_PAUSE_MS}. */
const FIRST_PAUSE_MS = 60_000;
const MAX_PAUSE_MS = 60 * 60_000;

/** How long an endpoint is paused after its `failures`-th failure in a row (at least the threshold). */
export const pauseAfter = (failures: number): number => Math.min(FIRST_PAUSE_MS * 2 ** Math.max(0, failures - BREAKER_THRESHOLD), MAX_PAUSE_MS);

/** An endpoint's breaker opening (paused) or closing (resumed by a successful attempt). */
export interface BreakerChange {
  readonly endpointId: string;
  readonly ownerUserId: string | null;
  readonly change: 'paused' | 'resumed';
  readonly consecutiveFailures: number;
  /** When the probe may go (paused); null once resumed. */
  readonly pausedUntil: string | null;
}

/**
 * Records an attempt's result in its endpoint's breaker, inside the transaction that records the
 * attempt: a success closes it, a failure counts, and the threshold-th failure in a row (or a
 * failed probe) pauses the endpoint until `endedAt` plus the pause. The count is incremented in
 * SQL, so attempts ending at once on several instances all count. Returns the change, if any.
 */
export async function recordInBreaker(trx: Transaction<Tables>, endpointId: string, ok: boolean, endedAt: number): Promise<BreakerChange | null> {
  const endpoints = trx.updateTable('webhook_endpoints').where('id', '=', endpointId);
  if (ok) {
    const resumed = await endpoints
      .set({ consecutive_failures: 0, paused_until: null })
      .where('consecutive_failures', '>=', BREAKER_THRESHOLD)
      .returning('owner_user_id')
      .executeTakeFirst();
    if (resumed) return { endpointId, ownerUserId: resumed.owner_user_id, change: 'resumed', consecutiveFailures: 0, pausedUntil: null };
    await endpoints.set({ consecutive_failures: 0 }).where('consecutive_failures', '>', 0).execute();
    return null;
  }
  const row = await endpoints
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .returning(['consecutive_failures', 'owner_user_id', 'paused_until'])
    .executeTakeFirst();
  const failures = Number(row?.consecutive_failures ?? 0);
  if (!row || failures < BREAKER_THRESHOLD) return null;
  // An attempt that was in flight when the endpoint was paused counts, but does not lengthen the pause.
  if (row.paused_until !== null && row.paused_until > iso(endedAt)) return null;
  const pausedUntil = iso(endedAt + pauseAfter(failures));
  await endpoints.set({ paused_until: pausedUntil }).execute();
  // Only the opening is a change: a failed probe extends the pause.
  return failures === BREAKER_THRESHOLD ? { endpointId, ownerUserId: row.owner_user_id, change: 'paused', consecutiveFailures: failures, pausedUntil } : null;
}
