import { createHash } from 'node:crypto';
import { chainHolds, effectiveRights, readChild, summarize } from '@rz-auth/token';
import type { DerivedUse, Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { invalidToken } from '../../errors.js';
import { AllowList } from '../cidrs.js';
import type { DerivationKeys } from './keys.js';
import { intersectNetworks } from './networks.js';
import type { SeenRecorder } from './seen.js';
import type { DerivedStore } from './store.js';

/** How rz-auth's own API is named in an `aud` caveat (contract §14.5). */
export const RZ_AUTH_AUDIENCE = 'rz-auth';

const uuidText = (bytes: Uint8Array): string => {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export interface DerivedAuthDeps {
  readonly store: DerivedStore;
  readonly keys: DerivationKeys;
  readonly seen: SeenRecorder;
  readonly clock: Clock;
  /** DERIVED_MAX_TTL_S. */
  readonly maxTtlS: number;
  /** A failed re-wrap of a key under the new DERIVE_KEK: reported, the request still served. */
  readonly onError: (error: unknown) => void;
}

/**
 * Authenticates `rzd_` children (contract §14.4–§14.6): bounds and grammar first (readChild, no
 * lookup, no HMAC), then the parent by its reference, its derivation key unwrapped, the chain
 * checked in constant time, and every caveat against the parent as it is now. Every refusal is
 * the one §2 `invalid_token`, whatever its reason.
 */
export class DerivedAuthenticator {
  constructor(private readonly deps: DerivedAuthDeps) {}

  /**
   * The principal of child `token` used from `address` (null for introspection, where the service
   * applies the networks) by `audience` (`rz-auth` for its own API, a service's `rzs_` name).
   * @throws ProblemError invalid_token (or rejects with it).
   */
  async authenticate(token: string, address: string | null, audience: string): Promise<Principal> {
    const child = readChild(token);
    if (!child) throw invalidToken();
    const summary = summarize(child.caveats);
    const parent = await this.deps.store.parent(Buffer.from(child.parentRef).toString('hex'));
    if (!parent || parent.revoked || !parent.derivable || parent.sealedKey === null) throw invalidToken();
    const { token: record } = parent;
    const key = this.deps.keys.open(record.id, parent.sealedKey);
    if (!chainHolds(child, key)) throw invalidToken();
    if (this.deps.keys.stale(parent.sealedKey)) {
      this.deps.store.rewrap(record.id, parent.sealedKey, this.deps.keys.reseal(record.id, key)).catch(this.deps.onError);
    }
    const now = this.deps.clock.now();
    const seconds = (iso: string | null) => (iso === null ? null : Math.floor(Date.parse(iso) / 1000));
    const facts = { scopes: record.scopes, expiresAt: seconds(record.expiresAt), allowedCidrs: record.allowedCidrs, childrenRevokedBefore: seconds(parent.childrenRevokedBefore) };
    const rights = effectiveRights(summary, facts, { now: Math.floor(now / 1000), maxTtl: this.deps.maxTtlS });
    if (!rights) throw invalidToken();
    if (rights.aud !== undefined && !rights.aud.includes(audience)) throw invalidToken();
    const networks = intersectNetworks(rights.networks);
    if (networks !== null && (networks.length === 0 || (address !== null && !new AllowList(networks).admits(address)))) throw invalidToken();
    const childId = uuidText(child.childId);
    if (await this.deps.store.childRevoked(record.id, childId)) throw invalidToken();
    const derived: DerivedUse = { childId, labels: rights.labels, aud: rights.aud, rl: rights.rl };
    this.deps.seen.record(createHash('sha256').update(token).digest('hex'), {
      tokenId: record.id,
      childId,
      labels: rights.labels,
      caveats: { iat: rights.iat, exp: rights.exp, scopes: summary.scopes ?? null, aud: rights.aud ?? null, cidrs: summary.cidrs, rl: rights.rl },
      at: new Date(now).toISOString(),
      address,
    });
    return {
      type: record.kind === 'api' ? 'api_token' : 'app_token',
      user: parent.owner,
      credentialId: record.id,
      scopes: rights.scopes,
      issuedAt: rights.iat * 1000,
      expiresAt: rights.exp * 1000,
      app: parent.app,
      allowedCidrs: networks,
      derived,
    };
  }
}
