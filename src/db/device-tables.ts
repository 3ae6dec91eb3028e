import type { Generated } from 'kysely';

/** A registered public OAuth client (contract §13.3); the built-in `rz-cli` is not stored. */
export interface OAuthClientsTable {
  id: string;
  name: string;
  /** JSON array: the scopes the client may ask for. */
  scopes: string;
  /** JSON array: what a request without `scope` asks for. */
  default_scopes: string;
  /** The longest expiry, in days, of a token issued to it; null: the device flow's own limit. */
  max_days: number | null;
  created_at: string;
  disabled_at: string | null;
}

export type DeviceRequestState = 'pending' | 'approved' | 'denied' | 'redeemed' | 'expired';

/** One device authorization (RFC 8628). Never the device code itself: only its SHA-256. */
export interface DeviceRequestsTable {
  id: string;
  device_code_digest: string;
  /** The 8 letters without the dash. */
  user_code: string;
  client_id: string;
  /** JSON array of the requested scopes. */
  scopes: string;
  device_name: string | null;
  request_ip: string;
  user_agent: string | null;
  created_at: string;
  expires_at: string;
  state: DeviceRequestState;
  /** Seconds a poll must wait after the previous one; grows by 5 on each `slow_down`. */
  interval_s: number;
  last_poll_at: string | null;
  /** Lookups through the approval API; from the 11th the code answers as unknown. */
  lookups: Generated<number>;
  approver_id: string | null;
  approved_scopes: string | null;
  approved_days: number | null;
  approved_name: string | null;
  token_id: string | null;
}
