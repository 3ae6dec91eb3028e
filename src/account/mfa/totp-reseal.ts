import type { TotpSecrets } from './totp-secrets.js';
import type { TotpStore } from './totp-store.js';

/**
 * Opens every stored TOTP secret and seals again, under MFA_ENCRYPTION_KEY, those still under
 * MFA_ENCRYPTION_KEY_OLD; meant for start-up, as src/db/sealed-columns.ts does for the other
 * secrets. A secret that no configured key opens (a key removed too early, or no key at all while
 * users have authenticator apps) throws UnsealError, naming the factor: refusing to start is better
 * than failing each of that user's logins. Returns how many were sealed again.
 */
export async function resealTotpSecrets(store: TotpStore, secrets: TotpSecrets): Promise<number> {
  let resealed = 0;
  for (const { id, sealedSecret } of await store.listSealed()) {
    const secret = secrets.open(id, sealedSecret);
    if (!secrets.stale(sealedSecret)) continue;
    // Conditional on the value read, so an instance starting at the same moment is not overwritten.
    if (await store.reseal(id, sealedSecret, secrets.seal(id, secret))) resealed++;
  }
  return resealed;
}
