import type { ColumnType, Generated } from 'kysely';
import type { EmailChangeRequestsTable, LinkTokensTable, MailOutboxTable, PasswordResetRequestsTable } from './mail-tables.js';
import type { DeviceRequestsTable, OAuthClientsTable } from './device-tables.js';
import type { DerivedRevocationsTable, DerivedSeenTable } from './derived-tables.js';
import type { MfaFactorsTable, MfaLockoutsTable, MfaPendingLoginsTable, MfaRecoveryCodesTable, MfaUsersTable, WebAuthnChallengesTable } from './mfa-tables.js';

/*
 * Row types: only store files see these. Timestamps are ISO 8601 UTC strings in every dialect so
 * they compare and sort the same way on SQLite and PostgreSQL; ids are UUID strings.
 */

export interface UsersTable {
  id: string;
  email: string;
  username: string;
  /** Lower-cased username: uniqueness is case-insensitive. */
  username_key: string;
  password_hash: string;
  created_at: string;
  /** When a link mailed to the current address was used; null while it is unproven. */
  email_verified_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** The client address at login, as the rate limiter sees it; null for sessions older than the column. */
  client_address: string | null;
  /** The User-Agent at login: control characters removed, length capped. */
  user_agent: string | null;
  /** Coalesced: written at most once per flush interval per instance, not per request. */
  last_used_at: string | null;
  /** RFC 8176 methods of the session's newest token, space-separated; null: a password login from before the column. */
  amr: string | null;
  /** The last primary or step-up authentication (contract §12.4); null: the session's creation. */
  auth_time: string | null;
}

export interface AppsTable {
  id: string;
  user_id: string;
  name: string;
  description: string;
  created_at: string;
}

export interface TokensTable {
  id: string;
  kind: 'api' | 'app';
  user_id: string;
  app_id: string | null;
  name: string;
  /** JSON array of scope strings. */
  scopes: string;
  /** Hex SHA-256 of the full token value; the value itself is never stored. */
  digest: string;
  hint: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** JSON array of `address/prefix` networks the token may be used from; null for anywhere. */
  allowed_cidrs: string | null;
  /** The client address of the last use, as the rate limiter saw it. */
  last_used_ip: string | null;
  /** The token that replaced this one by rotation; it works until `expires_at`, the grace's end. */
  replaced_by: string | null;
  /** The last `token.expiring` notice recorded for the token: '7d', '1d', or null for none yet. */
  expiry_notice: Generated<string | null>;
  /** `device_flow` for tokens the device flow issued (with its client and device name), else `api`. */
  origin: Generated<'api' | 'device_flow'>;
  client_id: Generated<string | null>;
  device_name: Generated<string | null>;
  /** 1 when children may be derived from the token (contract §14.3). */
  derivable: Generated<number>;
  /** The derivation key sealed under DERIVE_KEK (src/tokens/derived/keys.ts); null when not derivable. */
  derive_key: Generated<string | null>;
  /** 32 hex digits its children carry; null when never derivable. */
  parent_ref: Generated<string | null>;
  /** Children whose `iat` is before this are dead (revoke-all). */
  children_revoked_before: Generated<string | null>;
}

/** The scopes each token has exercised, one row per token and scope. */
export interface TokenScopeUsesTable {
  token_id: string;
  scope: string;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  created_at: string;
  /** Set when a newer key takes over signing; the key still verifies until tokens it signed expire. */
  retired_at: string | null;
}

/** A platform service's credential (`rzs_`): introspection and the event stream only. */
export interface ServiceCredentialsTable {
  id: string;
  name: string;
  /** Hex SHA-256 of the full credential; the value itself is never stored. */
  digest: string;
  hint: string;
  created_at: string;
  revoked_at: string | null;
}

/**
 * An append-only log of changes that in-process caches must forget (revoked tokens, logged-out
 * sessions, deleted apps and users, key changes). Written in the same transaction as the change.
 */
export interface ChangesTable {
  id: Generated<number>;
  kind: 'token' | 'session' | 'app' | 'user' | 'keys' | 'service';
  ref: string;
  created_at: string;
  /** JSON `{ type, data }`: the change as an event of GET /api/events; null for changes that are none. */
  event: string | null;
  /** Milliseconds since the epoch when the change was written; null on rows recorded before it was kept. */
  committed_at: ColumnType<number | string | null, number | undefined, never>;
}

/** One security event (docs/audit-log.md). Never a secret: no token value, digest or password. */
export interface AuditEventsTable {
  seq: Generated<number>;
  id: string;
  type: string;
  occurred_at: string;
  /** Whose log the event is in; null when it is nobody's (a failed login for an unknown email). */
  user_id: string | null;
  actor_type: string;
  actor_id: string | null;
  subject_type: string | null;
  subject_id: string | null;
  client_address: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** JSON object. */
  details: string;
  /** 1 once the webhook dispatcher has made the event's deliveries (the outbox's mark), 0 until then. */
  dispatched: Generated<number>;
}

/** A webhook endpoint: a user's (their own events) or the operator's (owner null: everyone's). */
export interface WebhookEndpointsTable {
  id: string;
  owner_user_id: string | null;
  url: string;
  description: string | null;
  /** JSON array of the audit event types it receives. */
  event_types: string;
  /** `whsec_` + base64: the signing key. Never leaves the service but in the creation's answer. */
  secret: string;
  created_at: string;
  /** Failed attempts in a row (any delivery); a success resets it. The breaker opens at a threshold (breaker.ts). */
  consecutive_failures: Generated<number>;
  /** While the breaker is open: nothing is sent before this time, then one probe. Null when closed. */
  paused_until: string | null;
}

/** One message to one endpoint, with its retry state (the `webhook-id` is its id). */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  /** The audit event it carries; null for a test delivery. */
  event_id: string | null;
  event_type: string;
  /** The exact JSON body every attempt sends. */
  payload: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: Generated<number>;
  /** When the next attempt is due; null once finished. */
  next_attempt_at: string | null;
  /** A worker holds the delivery until then; another may claim it after (the first one died). */
  lease_until: string | null;
  /** The claim that holds the lease: only it may record the attempt. */
  lease_token: string | null;
  created_at: string;
  finished_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Tables {
  users: UsersTable;
  sessions: SessionsTable;
  apps: AppsTable;
  tokens: TokensTable;
  token_scope_uses: TokenScopeUsesTable;
  signing_keys: SigningKeysTable;
  service_credentials: ServiceCredentialsTable;
  changes: ChangesTable;
  audit_events: AuditEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  mail_outbox: MailOutboxTable;
  link_tokens: LinkTokensTable;
  email_change_requests: EmailChangeRequestsTable;
  password_reset_requests: PasswordResetRequestsTable;
  mfa_factors: MfaFactorsTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_users: MfaUsersTable;
  webauthn_challenges: WebAuthnChallengesTable;
  mfa_pending_logins: MfaPendingLoginsTable;
  mfa_lockouts: MfaLockoutsTable;
  oauth_clients: OAuthClientsTable;
  device_requests: DeviceRequestsTable;
  derived_revocations: DerivedRevocationsTable;
  derived_seen: DerivedSeenTable;
}
