import { bool, ConfigError, type Env, int } from '../lib/env-vars.js';

/** The account's email flows (docs/email.md, docs/configuration.md). */
export interface AccountEmailConfig {
  /** EMAIL_VERIFICATION_REQUIRED: token-minting routes refuse users whose email is unproven. */
  readonly verificationRequired: boolean;
  /** RESET_TOKEN_TTL_S, in milliseconds: the life of a reset link. */
  readonly resetTtlMs: number;
  /** VERIFY_TOKEN_TTL_S, in milliseconds: the life of a verification or email-change link. */
  readonly verifyTtlMs: number;
}

/** EMAIL_VERIFICATION_REQUIRED, RESET_TOKEN_TTL_S and VERIFY_TOKEN_TTL_S; `mailOn` when SMTP_URL is set. */
export function accountEmailFrom(env: Env, mailOn: boolean): AccountEmailConfig {
  const verificationRequired = bool(env, 'EMAIL_VERIFICATION_REQUIRED', false);
  // Without mail no address could ever be proven, and nobody could mint a token again.
  if (verificationRequired && !mailOn) throw new ConfigError('EMAIL_VERIFICATION_REQUIRED=true needs mail: set SMTP_URL, MAIL_FROM and PUBLIC_URL');
  return {
    verificationRequired,
    resetTtlMs: int(env, 'RESET_TOKEN_TTL_S', 1800, 300, 86_400) * 1000,
    verifyTtlMs: int(env, 'VERIFY_TOKEN_TTL_S', 172_800, 3600, 604_800) * 1000,
  };
}
