import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';

/** Active tokens by kind: what a deletion that cascades to them revokes. */
export interface ActiveTokens {
  readonly api: number;
  readonly app: number;
}

/**
 * The tokens of a user or of an app that work at `at` (not revoked, not expired), counted in the
 * transaction that is about to delete them with their owner: the foreign keys' cascade removes
 * them without a word, and the metrics count what it revoked (docs/operations.md).
 */
export async function activeTokens(trx: Transaction<Tables>, owner: { readonly userId: string } | { readonly appId: string }, at: string): Promise<ActiveTokens> {
  const rows = await trx
    .selectFrom('tokens')
    .select(['kind', (eb) => eb.fn.countAll<number | string>().as('n')])
    .$if('userId' in owner, (q) => q.where('user_id', '=', 'userId' in owner ? owner.userId : ''))
    .$if('appId' in owner, (q) => q.where('app_id', '=', 'appId' in owner ? owner.appId : ''))
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .groupBy('kind')
    .execute();
  const of = (kind: 'api' | 'app') => Number(rows.find((row) => row.kind === kind)?.n ?? 0);
  return { api: of('api'), app: of('app') };
}
