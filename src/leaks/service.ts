import { auditEvent, type RequestContext } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import type { ServiceCredentialStore } from '../services/store.js';
import { tokenKind, tokenDigest } from '../tokens/format.js';
import { tokenDetails } from '../tokens/service.js';
import type { TokenStore } from '../tokens/store.js';

/** How a report arrived: a list of strings, or GitHub secret scanning's array of matches. */
export type ReportFormat = 'list' | 'github';

/**
 * Leak response: every live token among reported strings is revoked, through the change log (so
 * every instance and the event stream hear of it), and its owner's audit log says it leaked.
 * Holding a token is all it takes to kill it; a reporter learns nothing, since the answer is the
 * same whatever matched.
 */
export class LeakResponse {
  constructor(
    private readonly deps: {
      readonly tokens: TokenStore;
      readonly services: ServiceCredentialStore;
      readonly feed: ChangeFeed;
      readonly clock: Clock;
    },
  ) {}

  /** Revokes what is live among `reported`; strings that are not our tokens cost a regex and a CRC32 each. */
  async report(reported: readonly string[], format: ReportFormat, context: RequestContext): Promise<void> {
    for (const value of new Set(reported)) {
      // Shape and checksum first: only well-formed tokens of ours reach the store.
      const kind = tokenKind(value);
      if (kind === 'service') await this.revokeService(value, format, context);
      else if (kind !== null) await this.revokeToken(value, format, context);
    }
  }

  private async revokeToken(value: string, format: ReportFormat, context: RequestContext): Promise<void> {
    const found = await this.deps.tokens.findByDigest(tokenDigest(value));
    const now = this.deps.clock.now();
    if (!found || found.revoked || (found.token.expiresAt !== null && Date.parse(found.token.expiresAt) <= now)) return;
    const { id, userId } = found.token;
    const audit = () =>
      auditEvent({ type: 'token.leaked', userId, subject: { type: 'token', id }, details: { ...tokenDetails(found.token), report_format: format } }, context, now);
    if (await this.deps.tokens.revoke(id, userId, iso(now), audit)) await this.deps.feed.committed('token', id);
  }

  private async revokeService(value: string, format: ReportFormat, context: RequestContext): Promise<void> {
    const found = await this.deps.services.findByDigest(tokenDigest(value));
    if (!found || found.revokedAt !== null) return;
    const now = this.deps.clock.now();
    const details = { token_type: 'service_credential', hint: found.hint, report_format: format };
    const event = auditEvent({ type: 'token.leaked', userId: null, subject: { type: 'service_credential', id: found.id }, details }, context, now);
    if (await this.deps.services.revoke(found.id, iso(now), event)) await this.deps.feed.committed('service', found.id);
  }
}
