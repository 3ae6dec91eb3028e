/**
 * How due deliveries share the senders' slots (docs/webhooks.md, "Delivery and retries"): no
 * endpoint, and no owner, can hold them all, and an owner with little in flight goes before one
 * with a backlog, so hanging receivers delay only their own deliveries.
 */

/**
 * Attempts one endpoint may have in flight at once, across every instance: a slow or dead receiver
 * holds at most this many of the senders' slots.
 */
export const PER_ENDPOINT = 2;

/** Attempts in flight at once for an endpoint whose breaker is open (breaker.ts): one probe. */
export const PER_PROBING_ENDPOINT = 1;

/**
 * Attempts one user's endpoints may have in flight at once, across every instance: a user's ten
 * endpoints, all hanging, hold this many slots and not twenty.
 */
export const PER_OWNER = 8;

/** Slots of each process that only operator endpoints may take: users' backlogs never reach them. */
export const RESERVED_FOR_OPERATOR = 4;

/** The share a claim may hand out: `forUsers` of its slots to user endpoints, each owner `perOwner` in flight. */
export interface Share {
  readonly forUsers: number;
  readonly perOwner: number;
}

/** A due delivery that may be claimed, with the leases its endpoint and owner already hold. */
export interface Candidate {
  readonly id: string;
  readonly endpoint_id: string;
  /** Null for an operator endpoint. */
  readonly owner_user_id: string | null;
  /** Leases its endpoint holds, and the most it may hold. */
  readonly busy: number | string | null;
  readonly cap: number | string;
  /** Leases its owner's endpoints hold (0 for the operator, who has no owner cap). */
  readonly owner_busy: number | string | null;
}

const OPERATOR = '';

/**
 * Up to `limit` candidate ids, round-robin over owners: each round gives one delivery to every
 * owner with room left, owners holding the fewest leases first, so a newly due owner goes ahead of
 * the backlogs; within an owner, earliest due first (the candidates' order).
 */
export function pickFairly(candidates: readonly Candidate[], limit: number, share: Share): string[] {
  const owners = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const key = c.owner_user_id ?? OPERATOR;
    owners.set(key, [...(owners.get(key) ?? []), c]);
  }
  const ownerHeld = new Map([...owners].map(([key, list]) => [key, Number(list[0]?.owner_busy ?? 0)]));
  const order = [...owners.keys()].sort((a, b) => (ownerHeld.get(a) ?? 0) - (ownerHeld.get(b) ?? 0));
  const endpointHeld = new Map<string, number>();
  const ids: string[] = [];
  let forUsers = share.forUsers;
  for (let progress = true; progress && ids.length < limit; ) {
    progress = false;
    for (const owner of order) {
      const operator = owner === OPERATOR;
      if (ids.length >= limit) break;
      if (!operator && (forUsers <= 0 || (ownerHeld.get(owner) ?? 0) >= share.perOwner)) continue;
      const list = owners.get(owner) ?? [];
      const i = list.findIndex((c) => (endpointHeld.get(c.endpoint_id) ?? Number(c.busy)) < Number(c.cap));
      const picked = list[i];
      if (!picked) continue;
      list.splice(i, 1);
      endpointHeld.set(picked.endpoint_id, (endpointHeld.get(picked.endpoint_id) ?? Number(picked.busy)) + 1);
      ownerHeld.set(owner, (ownerHeld.get(owner) ?? 0) + 1);
      if (!operator) forUsers -= 1;
      ids.push(picked.id);
      progress = true;
    }
  }
  return ids;
}
