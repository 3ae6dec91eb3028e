/** The tables of derived tokens (migration 0019, contract §14). */

/** What a derivable parent keeps beside its digest (contract §14.3). */
export interface StoredDerivation {
  /** 32 hex digits: the reference its children carry. */
  readonly parentRef: string;
  /** The derivation key, sealed under DERIVE_KEK with the key's id (src/lib/sealed.ts). */
  readonly sealedKey: string;
}

/** A revoked child id of a parent, kept until every child with that id has expired (DERIVED_MAX_TTL_S). */
export interface DerivedRevocationsTable {
  token_id: string;
  /** The child id in UUID text form. */
  child_id: string;
  revoked_at: string;
  keep_until: string;
}

/** One row per distinct child token seen in use (contract §14.6). */
export interface DerivedSeenTable {
  /** Hex SHA-256 of the child's value; the value itself is never stored. */
  digest: string;
  /** The parent. */
  token_id: string;
  child_id: string;
  /** JSON array of the child's labels, in order. */
  labels: string;
  /** JSON summary of the child's caveats: scopes, aud, cidrs, rl, iat, exp. */
  caveats: string;
  first_seen_at: string;
  last_used_at: string;
  last_used_ip: string | null;
}
