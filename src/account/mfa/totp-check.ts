import { matchingStep, normalizeTotpCode } from './totp.js';
import type { TotpSecrets } from './totp-secrets.js';
import type { ConfirmOutcome, TotpFactor, TotpStore } from './totp-store.js';
import type { FactorWrites } from './factor-store.js';

/**
 * Why a code was refused, for the audit log only: every refusal is the same `invalid_credentials`
 * on the wire. `replayed` is a right code whose step was already accepted (or is being accepted
 * by a parallel request).
 */
export type TotpRefusal = 'malformed' | 'mismatch' | 'replayed';

export type TotpCheck = { readonly ok: true; readonly factorId: string } | { readonly ok: false; readonly reason: TotpRefusal };

export interface TotpDeps {
  readonly store: TotpStore;
  readonly secrets: TotpSecrets;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A secret sealed under MFA_ENCRYPTION_KEY_OLD is sealed again under the current key once it has been used (contract §12.2). */
async function resealIfStale(deps: TotpDeps, factor: TotpFactor, secret: string): Promise<void> {
  if (deps.secrets.stale(factor.sealedSecret)) await deps.store.reseal(factor.id, factor.sealedSecret, deps.secrets.seal(factor.id, secret));
}

/** The first of `factors` for which `code` is valid now, with its step and opened secret. */
function findMatch(deps: TotpDeps, factors: readonly TotpFactor[], code: string, nowMs: number): { factor: TotpFactor; step: number; secret: string } | null {
  for (const factor of factors) {
    const secret = deps.secrets.open(factor.id, factor.sealedSecret);
    const step = matchingStep(secret, code, nowMs);
    if (step !== null) return { factor, step, secret };
  }
  return null;
}

/**
 * Checks a second-factor code against the user's active TOTP factors (login, step-up). A match is
 * accepted only through the store's compare-and-set on the last accepted step, so a code works
 * once, also when two requests carry it at the same moment. The caller has reserved the attempt
 * against the user's limit before calling (contract §12.6).
 */
export async function checkTotp(deps: TotpDeps, userId: string, input: string, nowMs: number): Promise<TotpCheck> {
  const code = normalizeTotpCode(input);
  if (code === null) return { ok: false, reason: 'malformed' };
  const match = findMatch(deps, await deps.store.listActive(userId), code, nowMs);
  if (!match) return { ok: false, reason: 'mismatch' };
  if (!(await deps.store.acceptStep(match.factor.id, match.step, iso(nowMs)))) return { ok: false, reason: 'replayed' };
  await resealIfStale(deps, match.factor, match.secret);
  return { ok: true, factorId: match.factor.id };
}

/** The outcome of confirming an enrolment with its first code. */
export type TotpConfirmation = ConfirmOutcome | 'malformed' | 'mismatch';

/**
 * Confirms a pending TOTP factor with its first code: the code's step becomes the factor's last
 * accepted step, so the confirming code cannot log in afterwards. `max` is the per-user cap of
 * active TOTP factors (contract §12.3: 10); `also` gives what the confirmation writes in its transaction.
 */
export async function confirmTotp(deps: TotpDeps, userId: string, factorId: string, input: string, name: string | null, nowMs: number, max: number, also?: (factor: { readonly name: string }) => FactorWrites): Promise<TotpConfirmation> {
  const code = normalizeTotpCode(input);
  if (code === null) return 'malformed';
  const factor = await deps.store.find(userId, factorId, iso(nowMs));
  if (factor?.status !== 'pending') return 'gone';
  const match = findMatch(deps, [factor], code, nowMs);
  if (!match) return 'mismatch';
  return deps.store.confirm(userId, factorId, match.step, name, iso(nowMs), max, also?.({ name: name ?? factor.name }));
}
