import type { ColumnType, Generated } from 'kysely';

// Row types of second factors (migration 0016, contract §12); only store files see these.

/** A second factor (contract §12.3): TOTP or WebAuthn; the other kind's columns are null. */
export interface MfaFactorsTable {
  id: string;
  user_id: string;
  type: 'totp' | 'webauthn';
  /** A TOTP factor is pending until its first code confirms it; WebAuthn factors are active at once. */
  status: 'pending' | 'active';
  name: string;
  created_at: string;
  /** A pending factor is gone after this time. */
  pending_until: string | null;
  last_used_at: string | null;
  /** TOTP: the 20-byte secret in base32, sealed under MFA_ENCRYPTION_KEY (src/lib/sealed.ts). */
  totp_secret: string | null;
  /** TOTP: the last time step accepted; a code is accepted only for a later step (RFC 6238 §5.2). */
  totp_last_step: ColumnType<number | string | null, number | null, number | null>;
  /** WebAuthn: the credential id, base64url; unique across every user. */
  credential_id: string | null;
  /** WebAuthn: the COSE public key, base64url. */
  public_key: string | null;
  /** WebAuthn: the authenticator's signature counter (0 to 2^32 − 1). */
  sign_count: ColumnType<number | string | null, number | null, number | null>;
  /** WebAuthn: JSON array of the transports the authenticator reported. */
  transports: string | null;
  /** WebAuthn: 1 when the BE / BS flags were set (backup-eligible, backed up), 0 when clear. */
  backup_eligible: number | null;
  backup_state: number | null;
  /** WebAuthn: 1 for a discoverable credential (credProps rk), 0 for not, null when not reported. */
  discoverable: number | null;
  /** WebAuthn: 1 when the registration verified the user (UV flag). */
  user_verified: number | null;
  /** WebAuthn: when a counter that did not grow suggested a cloned authenticator. */
  clone_suspected_at: string | null;
}

/** One recovery code, as its SHA-256 digest; using it deletes the row. */
export interface MfaRecoveryCodesTable {
  user_id: string;
  digest: string;
  created_at: string;
}

/** Per-user second-factor state. */
export interface MfaUsersTable {
  user_id: string;
  /** The random 32-byte WebAuthn user handle, base64url: never the user id. */
  webauthn_handle: string | null;
  /** When MFA_REQUIRED first applied to the user: the grace period counts from here. */
  required_since: string | null;
}

/** A WebAuthn challenge awaiting its ceremony; taken (deleted) on first use. */
export interface WebAuthnChallengesTable {
  id: string;
  purpose: string;
  user_id: string | null;
  /** base64url, as the ceremony's clientDataJSON carries it. */
  challenge: string;
  expires_at: string;
}

/** A login waiting for its second factor: the mfa_token's SHA-256 and the attempts it reserved. */
export interface MfaPendingLoginsTable {
  digest: string;
  user_id: string;
  attempts: Generated<number>;
  created_at: string;
  expires_at: string;
}

/** A user's second-factor attempts in the current window: reserved before each check, given back on success. */
export interface MfaLockoutsTable {
  user_id: string;
  window_start: string;
  attempts: number;
}
