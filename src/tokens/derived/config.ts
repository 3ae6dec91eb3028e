import { MAX_TTL_S } from '@rz-auth/token';
import { type Env, int } from '../../lib/env-vars.js';
import { type SealingKeys, sealingKeysFrom } from '../../lib/sealed.js';

/** Derived tokens (contract §14.2, docs/derived-tokens.md), parsed once at start-up. */
export interface DerivedConfig {
  /** DERIVE_KEK (and DERIVE_KEK_OLD during a rotation): wraps each derivable parent's derivation key; derivation is off without a current key. */
  readonly kek: SealingKeys;
  /** DERIVED_MAX_TTL_S: the longest effective life of any child, and how long a child's revocation is kept. */
  readonly maxTtlS: number;
}

export function derivedFrom(env: Env): DerivedConfig {
  return { kek: sealingKeysFrom(env, 'DERIVE_KEK'), maxTtlS: int(env, 'DERIVED_MAX_TTL_S', 604_800, 1, MAX_TTL_S) };
}
