import type { Caveat, RateLimit } from './caveats.js';

/** What a chain of caveats allows on its own, before the parent is known (contract §14.5). */
export interface CaveatSummary {
  /** The first caveat's; later `iat` caveats are ignored. */
  readonly iat: number;
  /** The earliest `exp`. */
  readonly exp: number;
  /** The latest `nbf`, if any. */
  readonly nbf: number | undefined;
  /** The intersection of every `scopes` caveat, in the first one's order; absent without any. */
  readonly scopes: readonly string[] | undefined;
  /** The intersection of every `aud` caveat; absent without any (then no audience restriction). */
  readonly aud: readonly string[] | undefined;
  /** Each `cidrs` caveat: a client address must be in every one of these lists. */
  readonly cidrs: readonly (readonly string[])[];
  readonly labels: readonly string[];
  /** Each `rl` caveat; each applies. */
  readonly rl: readonly RateLimit[];
}

const intersect = (held: readonly string[] | undefined, next: readonly string[]): readonly string[] =>
  held === undefined ? [...new Set(next)] : held.filter((item) => next.includes(item));

/** The summary of a well-formed child's caveats (first `iat`, at least one `exp`: see readChild). */
export function summarize(caveats: readonly Caveat[]): CaveatSummary {
  let iat: number | undefined;
  let exp = Infinity;
  let nbf: number | undefined;
  let scopes: readonly string[] | undefined;
  let aud: readonly string[] | undefined;
  const cidrs: (readonly string[])[] = [];
  const labels: string[] = [];
  const rl: RateLimit[] = [];
  for (const caveat of caveats) {
    switch (caveat.type) {
      case 'iat': iat ??= caveat.value; break;
      case 'exp': exp = Math.min(exp, caveat.value); break;
      case 'nbf': nbf = Math.max(nbf ?? 0, caveat.value); break;
      case 'scopes': scopes = intersect(scopes, caveat.value); break;
      case 'aud': aud = intersect(aud, caveat.value); break;
      case 'cidrs': cidrs.push(caveat.value); break;
      case 'label': labels.push(caveat.value); break;
      case 'rl': rl.push(caveat.value); break;
    }
  }
  return { iat: iat ?? Infinity, exp, nbf, scopes, aud, cidrs, labels, rl };
}

/** What the server knows of the parent when a child is used (epoch seconds). */
export interface ParentFacts {
  /** The parent's current scopes. */
  readonly scopes: readonly string[];
  readonly expiresAt: number | null;
  /** The parent's own allow-list; empty or null for none. */
  readonly allowedCidrs: readonly string[] | null;
  /** Set by revoke-all: children issued before it are dead. */
  readonly childrenRevokedBefore: number | null;
}

/** A child's effective rights (contract §14.5): never more than the parent's. */
export interface EffectiveRights {
  readonly iat: number;
  /** min(every exp caveat, the parent's expiry). */
  readonly exp: number;
  /** The parent's current scopes ∩ every `scopes` caveat. */
  readonly scopes: readonly string[];
  /** ∩ of every `aud` caveat; absent without one. The caller must be in it. */
  readonly aud: readonly string[] | undefined;
  /** The parent's allow-list (if any) then each `cidrs` caveat: the address must be in every list. */
  readonly networks: readonly (readonly string[])[];
  readonly labels: readonly string[];
  readonly rl: readonly RateLimit[];
}

/** How far ahead of the server's clock a deriving machine's clock may run (contract §14.5). */
export const IAT_LEEWAY_S = 60;

/**
 * The rights of a child whose tag holds, at `now`, or null when its time caveats or the parent's
 * revoke-all make it invalid: `iat` more than 60 s ahead, the effective life longer than
 * `maxTtl`, `now` not before the effective `exp` or before an `nbf`, or `iat` before
 * `childrenRevokedBefore`. Whether the parent exists, is active and derivable, and whether the
 * child id is revoked, are the server's lookups.
 */
export function effectiveRights(summary: CaveatSummary, parent: ParentFacts, at: { readonly now: number; readonly maxTtl: number }): EffectiveRights | null {
  const { iat, nbf } = summary;
  const exp = parent.expiresAt === null ? summary.exp : Math.min(summary.exp, parent.expiresAt);
  if (iat > at.now + IAT_LEEWAY_S || exp - iat > at.maxTtl || at.now >= exp) return null;
  if (nbf !== undefined && at.now < nbf) return null;
  if (parent.childrenRevokedBefore !== null && iat < parent.childrenRevokedBefore) return null;
  const scopes = summary.scopes;
  return {
    iat,
    exp,
    scopes: scopes === undefined ? [...parent.scopes] : parent.scopes.filter((scope) => scopes.includes(scope)),
    aud: summary.aud,
    networks: parent.allowedCidrs?.length ? [parent.allowedCidrs, ...summary.cidrs] : summary.cidrs,
    labels: summary.labels,
    rl: summary.rl,
  };
}
