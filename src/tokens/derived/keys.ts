import { derivationKey, parentRef } from '@rz-auth/token';
import { isSealed, Sealer, type SealingKeys, UnsealError } from '../../lib/sealed.js';
import type { StoredDerivation } from '../../db/derived-tables.js';

/** The GCM additional data: a wrapped key opens only in the token row it was sealed for. */
const contextOf = (tokenId: string): string => `tokens.derive_key:${tokenId}`;

/**
 * Derivation keys at rest, sealed with AES-256-GCM under DERIVE_KEK: `dk` is computed from the
 * parent's value while the server holds it (at creation or rotation), wrapped, and never stored
 * plain, so a copy of the database without the KEK cannot sign children (the digest of the value
 * does not give `dk`). DERIVE_KEK_OLD still opens during a rotation; {@link stale} says when a
 * wrapped key should be sealed again under the current one.
 */
export class DerivationKeys {
  private readonly sealer: Sealer;
  /** False without DERIVE_KEK: no token can be made derivable. */
  readonly enabled: boolean;

  constructor(keys: SealingKeys) {
    this.sealer = new Sealer(keys, 'DERIVE_KEK');
    this.enabled = keys.current !== null;
  }

  /** @throws Error when derivation is off (no DERIVE_KEK): callers check {@link enabled} first. */
  arm(tokenId: string, value: string): StoredDerivation {
    if (!this.enabled) throw new Error('DERIVE_KEK is not set: derivation keys cannot be stored');
    return { parentRef: parentRef(value), sealedKey: this.sealer.seal(Buffer.from(derivationKey(value)).toString('base64url'), contextOf(tokenId)) };
  }

  /** @throws UnsealError when no configured key opens the value, or it is not sealed at all. */
  open(tokenId: string, stored: string): Uint8Array {
    const what = `derivation key of token ${tokenId} (tokens.derive_key)`;
    if (!isSealed(stored)) throw new UnsealError(`${what} is not encrypted`);
    return Buffer.from(this.sealer.open(stored, contextOf(tokenId), what), 'base64url');
  }

  /** The key sealed again under DERIVE_KEK, for a value still under DERIVE_KEK_OLD. */
  reseal(tokenId: string, key: Uint8Array): string {
    return this.sealer.seal(Buffer.from(key).toString('base64url'), contextOf(tokenId));
  }

  stale(stored: string): boolean {
    return this.sealer.stale(stored);
  }
}
