import { auditEvent, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import { tokenDigest, tokenKind } from '../lib/token-format.js';
import { countedType, type TokenCounts } from '../observability/metrics/tokens.js';
import { tokenDetails } from '../tokens/service.js';
import type { TokenStore } from '../tokens/store.js';

/**
 * `POST /oauth/revoke` (RFC 7009): an API or app token value revokes itself; holding the value is
 * the proof, as with a leak report. Nothing tells the caller whether anything was revoked.
 */
export class SelfRevocation {
  constructor(
    private readonly tokens: TokenStore,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    private readonly counts: TokenCounts | null,
  ) {}

  async revoke(value: string, context: RequestContext): Promise<void> {
    const kind = tokenKind(value);
    if (kind !== 'api' && kind !== 'app') return;
    const found = await this.tokens.findByDigest(tokenDigest(value));
    if (!found || found.revoked) return;
    const { token } = found;
    const now = this.clock.now();
    const actor = { type: kind === 'api' ? ('api_token' as const) : ('app_token' as const), id: token.id };
    const audit = () => auditEvent({ type: 'token.revoked', userId: token.userId, actor, subject: { type: 'token', id: token.id }, details: { ...tokenDetails(token), via: 'self' } }, context, now);
    if (!(await this.tokens.revoke(token.id, token.userId, iso(now), audit))) return;
    this.counts?.revoked(countedType(token.kind), 'self');
    await this.feed.committed('token', token.id);
  }
}
