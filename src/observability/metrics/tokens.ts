import { Counter, type Registry } from 'prom-client';

export type CountedTokenType = 'api_token' | 'app_token' | 'service';
/**
 * Where a token came from. Tokens the Developers page makes arrive as any other API call (`api`),
 * and the CLI's credentials are made in a process no one scrapes: docs/operations.md.
 */
export type TokenOrigin = 'api' | 'rotation' | 'device_flow';
/** Why a token ended (docs/operations.md). */
export type RevokeReason = 'user' | 'self' | 'rotation' | 'expired' | 'idle' | 'leak' | 'app_deleted' | 'user_deleted';

/** What token services count: `rz_tokens_created_total` and `rz_tokens_revoked_total`. */
export interface TokenCounts {
  created(type: CountedTokenType, origin: TokenOrigin): void;
  /** `count` tokens (one by default) ended for `reason`; none is no change. */
  revoked(type: CountedTokenType, reason: RevokeReason, count?: number): void;
}

/** The stored kind of a token (`api`, `app`) as the metrics name its type. */
export const countedType = (kind: 'api' | 'app'): CountedTokenType => (kind === 'api' ? 'api_token' : 'app_token');

export function tokenCounts(registry: Registry): TokenCounts {
  const registers = [registry];
  const created = new Counter({ name: 'rz_tokens_created_total', help: 'Tokens created, by type and origin.', labelNames: ['token_type', 'origin'], registers });
  const revoked = new Counter({ name: 'rz_tokens_revoked_total', help: 'Tokens revoked or ended, by type and reason.', labelNames: ['token_type', 'reason'], registers });
  return {
    created: (type, origin) => created.labels(type, origin).inc(),
    revoked: (type, reason, count = 1) => count > 0 && revoked.labels(type, reason).inc(count),
  };
}
