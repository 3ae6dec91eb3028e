import type { Generated } from 'kysely';

// Row types of mail and the account's email flows (migrations 0014, 0015, contract §11); only store files see these.

/** One mail to send (docs/email.md); its id is the Message-ID's local part, the same on every attempt. */
export interface MailOutboxTable {
  /** The outbox order: a user's mails go out in it. */
  seq: Generated<number>;
  id: string;
  /** Whose mail it is; null for a mail of nobody's account. */
  user_id: string | null;
  /** The stored, validated address: the envelope recipient and the only header with user input. */
  recipient: string;
  template: string;
  /** JSON object of the strings the template interpolates; never a secret. */
  data: string;
  /** The purpose of the link the worker mints as it sends; null for a notice. */
  link_purpose: string | null;
  status: 'pending' | 'sent' | 'failed' | 'superseded';
  attempts: Generated<number>;
  /** When the next attempt is due; null once finished. */
  next_attempt_at: string | null;
  lease_until: string | null;
  lease_token: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  /** When it was sent, given up or superseded: the pruning sweep's clock. */
  finished_at: string | null;
}

/**
 * A mail's link token as its SHA-256 digest only (docs/email.md), bound to the mail that carried it
 * and the address it went to (the new one for a change); expiry counts from the mail's creation.
 */
export interface LinkTokensTable {
  digest: string;
  user_id: string;
  purpose: 'verify_email' | 'reset_password' | 'change_email';
  mail_id: string;
  email: string;
  created_at: string;
  expires_at: string;
}

/** Which session asked for an email change: the confirmation ends every other. */
export type EmailChangeRequestsTable = { mail_id: string; user_id: string; session_id: string; created_at: string };

/** A password reset request as received (email normalized), answered with a mail off the request path. */
export interface PasswordResetRequestsTable {
  seq: Generated<number>;
  email: string;
  address: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: string;
}
