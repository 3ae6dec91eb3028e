import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';

/**
 * Deliveries waiting to be sent, counted up to `cap`: at most `cap` entries of the pending index
 * are read, so the count costs the same bounded time however far the queue has backed up.
 */
export async function pendingDeliveries(db: Kysely<Tables>, cap: number): Promise<number> {
  const row = await db
    .selectFrom((eb) => eb.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').limit(cap).as('pending'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
