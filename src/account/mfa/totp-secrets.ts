import { isSealed, Sealer, type SealingKeys, UnsealError } from '../../lib/sealed.js';

/** The GCM additional data: a secret opens only in the factor row it was sealed for. */
const contextOf = (factorId: string): string => `mfa_factors.totp_secret:${factorId}`;

/**
 * TOTP secrets at rest, sealed with AES-256-GCM under MFA_ENCRYPTION_KEY (src/lib/sealed.ts):
 * the key id is stored with each value, MFA_ENCRYPTION_KEY_OLD still opens during a rotation, and
 * {@link stale} says when a value should be sealed again under the current key. Unlike the
 * service's other secrets a TOTP secret is never stored plain: without a key TOTP is off.
 */
export class TotpSecrets {
  private readonly sealer: Sealer;
  /** False without MFA_ENCRYPTION_KEY: no TOTP factor can be added. */
  readonly enabled: boolean;

  constructor(keys: SealingKeys) {
    this.sealer = new Sealer(keys, 'MFA_ENCRYPTION_KEY');
    this.enabled = keys.current !== null;
  }

  /** @throws Error when TOTP is off (no MFA_ENCRYPTION_KEY): callers check {@link enabled} first. */
  seal(factorId: string, secret: string): string {
    if (!this.enabled) throw new Error('MFA_ENCRYPTION_KEY is not set: TOTP secrets cannot be stored');
    return this.sealer.seal(secret, contextOf(factorId));
  }

  /** @throws UnsealError when no configured key opens the value, or it is not sealed at all. */
  open(factorId: string, stored: string): string {
    const what = `TOTP factor ${factorId} (mfa_factors.totp_secret)`;
    // A plain value was never written by this service: refuse it rather than trust it.
    if (!isSealed(stored)) throw new UnsealError(`${what} is not encrypted`);
    return this.sealer.open(stored, contextOf(factorId), what);
  }

  /** True when the value is sealed under MFA_ENCRYPTION_KEY_OLD and should be sealed again. */
  stale(stored: string): boolean {
    return this.sealer.stale(stored);
  }
}
