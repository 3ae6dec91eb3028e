import type { ExpressionBuilder } from 'kysely';
import type { Tables, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/tables.js';
import { BREAKER_THRESHOLD } from './breaker.js';
import { PER_ENDPOINT, PER_PROBING_ENDPOINT } from './fairness.js';

/** The delivery claim's view: a candidate delivery `d` joined to its endpoint `e`. */
export type Claimable = ExpressionBuilder<Tables & { d: WebhookDeliveriesTable; e: WebhookEndpointsTable }, 'd' | 'e'>;

/** The most leases a candidate's endpoint may hold: one probe while its breaker is open. */
export const endpointCap = (eb: Claimable) => eb.case().when('e.consecutive_failures', '>=', BREAKER_THRESHOLD).then(eb.lit(PER_PROBING_ENDPOINT)).else(eb.lit(PER_ENDPOINT)).end();

/** Leases held at `now` on a candidate's endpoint, and on its owner's endpoints: probes of the index on leased pending deliveries. */
export function leasesHeld(now: string) {
  const live = (eb: ExpressionBuilder<Tables & { b: WebhookDeliveriesTable }, 'b'>) => eb.and([eb('b.status', '=', 'pending'), eb('b.lease_until', '>', now)]);
  return {
    onEndpoint: (eb: Claimable) => eb.selectFrom('webhook_deliveries as b').select((b) => b.fn.countAll<number | string>().as('n')).whereRef('b.endpoint_id', '=', 'd.endpoint_id').where(live),
    byOwner: (eb: Claimable) =>
      eb
        .selectFrom('webhook_deliveries as b')
        .innerJoin('webhook_endpoints as o', 'o.id', 'b.endpoint_id')
        .select((b) => b.fn.countAll<number | string>().as('n'))
        .whereRef('o.owner_user_id', '=', 'e.owner_user_id')
        .where(live),
  };
}
