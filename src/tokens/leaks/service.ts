import { auditEvent, type Details, type RequestContext } from '../../audit/events.js';
import type { Transaction } from 'kysely';
import type { ChangeFeed } from '../../changes/feed.js';
import type { Tables } from '../../db/tables.js';
import { type Clock, iso } from '../../clock.js';
import type { ServiceCredential, ServiceCredentialStore } from '../../service-credentials/store.js';
import { type OpaqueKind, tokenDigest, tokenKind } from '../../lib/token-format.js';
import { tokenDetails } from '../service.js';
import type { TokenLookup, TokenStore } from '../store.js';
import type { GitHubKeys, GitHubSignature } from './github-keys.js';
import { countedType, type TokenCounts } from '../../observability/metrics/tokens.js';

/** How a report arrived: a list of strings, or GitHub secret scanning's array of matches. */
export type ReportFormat = 'list' | 'github';

/** A report's origin: for GitHub's format, the raw body and the headers that may sign it. */
export type ReportSource = { readonly format: 'list' } | { readonly format: 'github'; readonly body: Buffer; readonly signature: GitHubSignature };

/** The well-formed tokens of ours among reported strings, once each: shape and checksum, no lookup. */
export function wellFormed(reported: readonly string[]): Array<{ readonly value: string; readonly kind: OpaqueKind }> {
  return [...new Set(reported)].flatMap((value) => {
    const kind = tokenKind(value);
    return kind === null ? [] : [{ value, kind }];
  });
}

/**
 * Leak response: every live token among reported strings is revoked, through the change log (so
 * every instance and the event stream hear of it), and its owner's audit log says it leaked.
 * Holding a token is all it takes to kill it; a reporter learns nothing, since the answer is the
 * same whatever matched. A report in GitHub's format is recorded as verified only when GitHub's
 * signature checks out (docs/leak-response.md).
 */
export class LeakResponse {
  constructor(
    private readonly deps: {
      readonly tokens: TokenStore;
      readonly services: ServiceCredentialStore;
      readonly feed: ChangeFeed;
      readonly clock: Clock;
      readonly github: GitHubKeys;
      readonly counts?: TokenCounts | null;
      /** Mails the owner the `token_leaked` notice in the revoking transaction; absent while mail is off. */
      readonly notice?: ((trx: Transaction<Tables>, userId: string, data: Record<string, string>) => Promise<void>) | null;
    },
  ) {}

  /** Revokes what is live among `reported`; strings that are not our tokens cost a regex and a CRC32 each. */
  async report(reported: readonly string[], source: ReportSource, context: RequestContext): Promise<void> {
    // Shape and checksum first: only well-formed tokens of ours reach the store.
    const found = wellFormed(reported);
    if (found.length === 0) return;
    // The lookups start on a later turn of the event loop than the one that parsed the body.
    await new Promise((resolve) => setImmediate(resolve));
    // Only what was checked is claimed: `verified` is there only when GitHub's signature is.
    const verified = source.format === 'github' && (await this.deps.github.verified(source.body, source.signature));
    const report: Details = { report_format: source.format, ...(verified ? { verified } : {}) };
    const digests = (kind: 'tokens' | 'services') => found.filter((f) => (f.kind === 'service') === (kind === 'services')).map((f) => tokenDigest(f.value));
    const [tokens, services] = await Promise.all([this.deps.tokens.findByDigests(digests('tokens')), this.deps.services.findByDigests(digests('services'))]);
    for (const token of tokens) await this.revokeToken(token, report, context);
    for (const credential of services) await this.revokeService(credential, report, context);
  }

  private async revokeToken(found: TokenLookup, report: Details, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now();
    if (found.revoked || (found.token.expiresAt !== null && Date.parse(found.token.expiresAt) <= now)) return;
    const { id, userId } = found.token;
    const audit = () => auditEvent({ type: 'token.leaked', userId, subject: { type: 'token', id }, details: { ...tokenDetails(found.token), ...report } }, context, now);
    const { notice } = this.deps;
    // The owner hears of it by mail too (§11.5), in the revoking transaction.
    const also = notice && ((trx: Transaction<Tables>) => notice(trx, userId, { token_name: found.token.name, token_prefix: found.token.hint }));
    if (!(await this.deps.tokens.revoke(id, userId, iso(now), audit, also ?? undefined))) return;
    this.deps.counts?.revoked(countedType(found.token.kind), 'leak');
    await this.deps.feed.committed('token', id);
  }

  private async revokeService(found: ServiceCredential, report: Details, context: RequestContext): Promise<void> {
    if (found.revokedAt !== null) return;
    const now = this.deps.clock.now();
    const details = { token_type: 'service_credential', hint: found.hint, ...report };
    const event = auditEvent({ type: 'token.leaked', userId: null, subject: { type: 'service_credential', id: found.id }, details }, context, now);
    if (!(await this.deps.services.revoke(found.id, iso(now), event))) return;
    this.deps.counts?.revoked('service', 'leak');
    await this.deps.feed.committed('service', found.id);
  }
}
