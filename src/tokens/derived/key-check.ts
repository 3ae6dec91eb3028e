import type { Kysely } from 'kysely';
import type { Tables } from '../../db/tables.js';
import { ConfigError } from '../../lib/env-vars.js';
import type { DerivationKeys } from './keys.js';

/**
 * Opens every stored derivation key (contract §14.2): a derivable token that no configured key
 * opens, or any derivable token while DERIVE_KEK is unset, refuses the start rather than failing
 * its children one request at a time. Keys under DERIVE_KEK_OLD are sealed again when used
 * (src/tokens/derived/parents.ts). Returns how many keys were opened.
 */
export async function checkDerivationKeys(db: Kysely<Tables>, keys: DerivationKeys): Promise<number> {
  const rows = await db.selectFrom('tokens').select(['id', 'derive_key']).where('derivable', '=', 1).where('revoked_at', 'is', null).execute();
  if (rows.length > 0 && !keys.enabled) {
    throw new ConfigError(`${rows.length} derivable token(s) exist but DERIVE_KEK is not set: set it (and DERIVE_KEK_OLD during a rotation) so their children can be checked`);
  }
  for (const row of rows) keys.open(row.id, row.derive_key ?? '');
  return rows.length;
}
