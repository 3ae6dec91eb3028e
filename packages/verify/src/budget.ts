import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A token bucket's shape: `burst` lookups at once, refilled at `perSecond`. */
export interface LookupBudget {
  readonly burst: number;
  readonly perSecond: number;
}

/** Client addresses whose buckets are kept at once; the oldest goes first. */
const MAX_ADDRESSES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Takes one lookup from `bucket` at `now`: 0 when taken, else the seconds until one is there. */
function take(bucket: Bucket, budget: LookupBudget, now: number): number {
  bucket.tokens = Math.min(budget.burst, bucket.tokens + ((now - bucket.at) / 1000) * budget.perSecond);
  bucket.at = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return Math.max(1, Math.ceil((1 - bucket.tokens) / budget.perSecond));
}

/**
 * Whom a bucket is for: an IPv4 address (the IPv4-mapped IPv6 form too), or the /64 of an IPv6
 * one, since a single client commonly holds a whole /64 and could otherwise take a bucket per address.
 */
export function clientKeyOf(address: string): string {
  if (isIP(address) === 0) return address.toLowerCase();
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toNormalizedString()}/64`);
  return `${network.toString()}/64`;
}

/**
 * What a lookup (a request to rz-auth's introspection) may cost: each client address has its own
 * budget, and tokens never seen active share one that is part of the service credential's budget
 * at rz-auth. Anyone can make up well-formed tokens; these keep such a caller from spending the
 * budget every other caller's checks need. A token once answered active is seen (kept apart from
 * the cache, so a reconnection that drops the cache does not make every caller new again).
 */
export class LookupBudgets {
  private readonly addresses = new Map<string, Bucket>();
  private readonly firstSeenBucket: Bucket;
  private readonly seenTokens = new Set<string>();

  constructor(
    private readonly perAddress: LookupBudget | false,
    private readonly firstSeen: LookupBudget | false,
    private readonly maxSeen: number,
  ) {
    this.firstSeenBucket = { tokens: firstSeen === false ? 0 : firstSeen.burst, at: Date.now() };
  }

  /** Takes one lookup of `token` for `address`: 0 when allowed, else the seconds to wait. */
  charge(token: string, address: string | undefined, now: number): number {
    const { perAddress, firstSeen } = this;
    const bucket = perAddress === false || address === undefined ? undefined : this.bucketOf(clientKeyOf(address), perAddress, now);
    const wait = bucket === undefined || perAddress === false ? 0 : take(bucket, perAddress, now);
    if (wait > 0 || firstSeen === false || this.seenTokens.has(token)) return wait;
    const shared = take(this.firstSeenBucket, firstSeen, now);
    // Refused here: the address's lookup was not spent.
    if (shared > 0 && bucket !== undefined) bucket.tokens += 1;
    return shared;
  }

  /** `token` was answered active: its lookups no longer draw on the budget of new tokens. */
  seen(token: string): void {
    this.seenTokens.delete(token);
    if (this.seenTokens.size >= this.maxSeen) {
      const oldest = this.seenTokens.values().next();
      if (!oldest.done) this.seenTokens.delete(oldest.value);
    }
    this.seenTokens.add(token);
  }

  private bucketOf(key: string, budget: LookupBudget, now: number): Bucket {
    let bucket = this.addresses.get(key);
    if (bucket === undefined) {
      if (this.addresses.size >= MAX_ADDRESSES) {
        const oldest = this.addresses.keys().next();
        if (!oldest.done) this.addresses.delete(oldest.value);
      }
      this.addresses.set(key, (bucket = { tokens: budget.burst, at: now }));
    }
    return bucket;
  }
}
