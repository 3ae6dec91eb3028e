import { randomUUID } from 'node:crypto';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { auditEvent, OPERATOR_CONTEXT, type RequestContext, SYSTEM_CONTEXT } from '../audit/events.js';
import type { ChangeFeed } from '../changes/feed.js';
import { type Clock, iso } from '../clock.js';
import type { KeyStore, StoredKey } from './store.js';

/** User tokens are signed with Ed25519 (RFC 8037); this is the only algorithm ever accepted. */
export const JWT_ALG = 'EdDSA';

/** A public key as published in the JWKS. */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: typeof JWT_ALG;
  readonly use: 'sig';
}

/** A public key of the ring that verifies user tokens, and until when. */
export interface VerificationKey {
  readonly kid: string;
  readonly publicKey: CryptoKey;
  readonly publicJwk: PublicJwk;
  /** Milliseconds since the epoch at which the key stops verifying; Infinity while it signs. */
  readonly verifiesUntil: number;
}

/**
 * The signing keys, shared by every instance through the store. The newest active key signs;
 * retired keys keep verifying until the tokens they signed have expired. A key's end is checked
 * each time it is used, not only when keys are loaded: an instance may run for weeks between loads.
 */
/** At most this many keys are published in the JWKS. */
export const MAX_PUBLISHED_KEYS = 100;

export class KeyRing {
  private signer: { kid: string; key: CryptoKey } | undefined;
  private verifiers = new Map<string, VerificationKey>();

  constructor(
    private readonly store: KeyStore,
    private readonly feed: ChangeFeed,
    private readonly clock: Clock,
    /** How long a retired key must keep verifying: the JWT lifetime plus leeway. */
    private readonly retireWindowMs: number,
  ) {}

  /** Loads the keys from the store, creating the first one on a fresh database. */
  async load(): Promise<void> {
    let keys = await this.store.list();
    if (!keys.some((k) => k.retiredAt === null)) {
      await this.rotate({ context: SYSTEM_CONTEXT });
      keys = await this.store.list();
    }
    await this.install(keys);
  }

  /**
   * Creates a key that takes over signing. By default the previous keys stay valid for
   * verification until their tokens expire; `immediate` drops them at once (key compromise),
   * which invalidates every token they signed.
   */
  async rotate(options: { immediate?: boolean; context?: RequestContext } = {}): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(JWT_ALG, { crv: 'Ed25519', extractable: true });
    const kid = randomUUID();
    const now = this.clock.now();
    const key: StoredKey = {
      kid,
      alg: JWT_ALG,
      publicJwk: JSON.stringify(await exportJWK(publicKey)),
      privateJwk: JSON.stringify(await exportJWK(privateKey)),
      createdAt: iso(now),
      retiredAt: null,
    };
    const immediate = options.immediate ?? false;
    const event = auditEvent({ type: 'keys.rotated', userId: null, subject: { type: 'signing_key', id: kid }, details: { immediate } }, options.context ?? OPERATOR_CONTEXT, now);
    await this.store.rotate(key, immediate ? { dropAllOthers: true, event } : { dropBefore: iso(now - this.retireWindowMs), event });
    await this.install(await this.store.list());
    // Like any revocation: this process's caches forget verifications by dropped keys at once.
    await this.feed.committed('keys', kid);
    return kid;
  }

  /** Re-reads the store after another process rotated keys. */
  async reload(): Promise<void> {
    await this.install(await this.store.list());
  }

  signingKey(): { kid: string; key: CryptoKey } {
    if (!this.signer) throw new Error('signing keys are not loaded');
    return this.signer;
  }

  /** The key for a `kid`, if it is one of ours and still verifies, with the time it stops. */
  verifier(kid: string): VerificationKey | undefined {
    const key = this.verifiers.get(kid);
    return key && this.clock.now() < key.verifiesUntil ? key : undefined;
  }

  /** The JWKS document: every key that may still verify a token. */
  /**
   * The newest {@link MAX_PUBLISHED_KEYS} keys still verifying. Only rotations far faster than the
   * JWT lifetime could keep more alive; the document's bound stays true even then.
   */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.live().map((k) => k.publicJwk).slice(-MAX_PUBLISHED_KEYS) };
  }

  kids(): string[] {
    return this.live().map((k) => k.kid);
  }

  /** How many keys still verify: the active ones (never retired) and the retired ones. */
  counts(): { active: number; retired: number } {
    const live = this.live();
    const active = live.filter((k) => k.verifiesUntil === Infinity).length;
    return { active, retired: live.length - active };
  }

  private live(): VerificationKey[] {
    const now = this.clock.now();
    return [...this.verifiers.values()].filter((k) => now < k.verifiesUntil);
  }

  private async install(keys: readonly StoredKey[]): Promise<void> {
    const now = this.clock.now();
    const verifiesUntil = (k: StoredKey) => (k.retiredAt === null ? Infinity : Date.parse(k.retiredAt) + this.retireWindowMs);
    const usable = keys.filter((k) => k.alg === JWT_ALG && now < verifiesUntil(k));
    const verifiers = new Map<string, VerificationKey>();
    for (const k of usable) {
      const { x = '' } = JSON.parse(k.publicJwk) as JWK;
      // Keys are only ever generated as Ed25519: read as anything else, a stored key fails here.
      const publicKey = (await importJWK({ kty: 'OKP', crv: 'Ed25519', x }, JWT_ALG)) as CryptoKey;
      const publicJwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x, kid: k.kid, alg: JWT_ALG, use: 'sig' };
      verifiers.set(k.kid, { kid: k.kid, publicKey, publicJwk, verifiesUntil: verifiesUntil(k) });
    }
    const newest = usable.filter((k) => k.retiredAt === null).at(-1);
    if (newest) {
      this.signer = { kid: newest.kid, key: (await importJWK(JSON.parse(newest.privateJwk) as JWK, JWT_ALG)) as CryptoKey };
    }
    this.verifiers = verifiers;
  }
}
