import type { ChangeFeed } from '../changes/feed.js';
import { iso } from '../clock.js';
import type { Sweep } from '../maintenance/runner.js';
import type { TokenLifecycleStore } from './lifecycle-store.js';
import { idleCutoff, type TokenPolicy } from './policy.js';
import type { UsageRecorder } from './usage.js';

/** After a round that revoked something: every instance hears of it now, not at its next poll. */
async function announced(feed: ChangeFeed, revoked: number): Promise<number> {
  if (revoked > 0) await feed.committed('token', 'sweep');
  return revoked;
}

/**
 * Rotated tokens whose grace ended are marked revoked, with a `token.revoked` event for the
 * platform's verifiers. Every instance already refuses them by their expiry; this only tells
 * whoever caches answers without checking `exp`.
 */
export const endedGraces = (store: TokenLifecycleStore, feed: ChangeFeed): Sweep => ({
  name: 'rotation graces',
  run: async (now) => announced(feed, await store.revokeEndedGraces(iso(now))),
});

/**
 * TOKEN_IDLE_REVOKE_DAYS: tokens unused that long (since creation if never used) are revoked. This
 * instance's unflushed uses are written first, so a token it just saw in use is not taken for idle.
 */
export const idleTokens = (store: TokenLifecycleStore, usage: UsageRecorder, feed: ChangeFeed, policy: TokenPolicy): Sweep => ({
  name: 'idle tokens',
  run: async (now) => {
    const cutoff = idleCutoff(now, policy);
    if (cutoff === null) return 0;
    await usage.flush();
    return announced(feed, await store.revokeIdle(iso(cutoff), iso(now)));
  },
});
