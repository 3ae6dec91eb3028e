import { Counter, type Registry } from 'prom-client';

export type MfaMethod = 'totp' | 'webauthn' | 'recovery_code';
/** `replayed`: a right TOTP code whose step was already used (RFC 6238 §5.2); `rate_limited`: the account's checks are locked. */
export type MfaOutcome = 'ok' | 'failed' | 'replayed' | 'rate_limited';
/** Reports one second-factor check, at login, step-up or enrolment confirmation (contract §12.6). */
export type MfaVerificationCount = (method: MfaMethod, outcome: MfaOutcome) => void;

/** `rz_mfa_verifications_total{method,outcome}`. */
export function mfaVerificationCount(registry: Registry): MfaVerificationCount {
  const counter = new Counter({ name: 'rz_mfa_verifications_total', help: 'Second-factor checks, by method and outcome.', labelNames: ['method', 'outcome'], registers: [registry] });
  return (method, outcome) => counter.labels(method, outcome).inc();
}

/** Metrics off: nothing counted. */
export const NO_MFA_COUNT: MfaVerificationCount = () => {};
