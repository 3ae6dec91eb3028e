import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { iso } from '../clock.js';
import type { Tables } from '../db/tables.js';

type Executor = Kysely<Tables> | Transaction<Tables>;

/** Every mail rz-auth sends (closed set; templates in src/mail/templates.ts). */
export const MAIL_TEMPLATES = [
  'verify_email', // link: <PUBLIC_URL>/developers#verify-email=<token>
  'reset_password', // link: <PUBLIC_URL>/developers#reset=<token>
  'confirm_email_change', // link: <PUBLIC_URL>/developers#confirm-email=<token>, sent to the NEW address
  'email_change_requested', // notice to the OLD address (no link that acts)
  'email_changed', // notice to the OLD address after confirmation
  'password_changed', // notice
  'password_reset', // notice
  'token_leaked', // notice: a token reported leaked and revoked (data: token_name, token_prefix)
  'mfa_factor_added', // notice: a second factor was added (data: factor_name)
  'mfa_factor_removed', // notice: a second factor was removed (data: factor_name)
  'mfa_recovery_codes_generated', // notice: a new set of recovery codes replaced the old one
  'mfa_recovery_code_used', // notice (data: recovery_codes_remaining)
  'mfa_locked', // notice: 10 failed second factors locked the checks (data: locked_until)
  'mfa_reset', // notice: the operator removed every second factor (`rz-auth users mfa-reset`)
  'device_approved', // notice: a device login was approved (data: client_name, device_name, request_ip)
] as const;
export type MailTemplate = (typeof MAIL_TEMPLATES)[number];

/** Purposes of link tokens; a mail with a purpose gets its link minted by the worker at send time. */
export type LinkPurpose = 'verify_email' | 'reset_password' | 'change_email';

export interface NewMail {
  readonly userId: string | null;
  /** The stored, validated address (never a raw request value); the only header that carries user input. */
  readonly recipient: string;
  readonly template: MailTemplate;
  /** Values the template interpolates (username, token name...), never a secret. */
  readonly data: Readonly<Record<string, string>>;
  readonly linkPurpose?: LinkPurpose;
}

/**
 * A plain mailbox: one `local@domain`, nothing a mail library could read as a second address, a
 * display name or a header break. The services store only such addresses; this is the last check
 * before one becomes a header.
 */
const PLAIN_MAILBOX = /^[^\s<>"(),;:@\\\x00-\x1f\x7f]{1,64}@[^\s<>"(),;:@\\\x00-\x1f\x7f]{1,253}$/u;

/** The link each link mail carries; the other templates are notices, which carry none. */
const LINK_OF: Readonly<Partial<Record<MailTemplate, LinkPurpose>>> = { verify_email: 'verify_email', reset_password: 'reset_password', confirm_email_change: 'change_email' };

/** Writes a mail into the outbox with the caller's transaction; returns its id (also its Message-ID's local part). */
export async function enqueueMail(db: Executor, mail: NewMail, now: number): Promise<string> {
  if (!PLAIN_MAILBOX.test(mail.recipient)) throw new Error('a mail recipient must be a plain mailbox (local@domain)');
  if (LINK_OF[mail.template] !== mail.linkPurpose) throw new Error(`a ${mail.template} mail takes the link purpose ${LINK_OF[mail.template] ?? '(none)'}`);
  const id = randomUUID();
  await db
    .insertInto('mail_outbox')
    .values({
      id,
      user_id: mail.userId,
      recipient: mail.recipient,
      template: mail.template,
      data: JSON.stringify(mail.data),
      link_purpose: mail.linkPurpose ?? null,
      status: 'pending',
      next_attempt_at: iso(now),
      lease_until: null,
      lease_token: null,
      last_error: null,
      created_at: iso(now),
      sent_at: null,
      finished_at: null,
    })
    .execute();
  return id;
}

/** Marks the user's still-pending mails of that purpose `superseded` (a newer link was asked for). */
export async function supersedeMails(db: Executor, userId: string, purpose: LinkPurpose): Promise<void> {
  await db
    .updateTable('mail_outbox')
    // The pruning sweep counts a superseded mail's age from its creation: no later instant is known here.
    .set((eb) => ({ status: 'superseded', next_attempt_at: null, finished_at: eb.ref('created_at') }))
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .where('link_purpose', '=', purpose)
    .execute();
}

/**
 * Mints the link token of a mail as the worker sends it (so no plaintext token is ever stored:
 * §11.3). Implemented by email-flows (src/account/links.ts or similar), passed to the worker by the
 * composition root. Returns the plaintext token, or null when the mail no longer deserves a link
 * (superseded, user gone): the worker then drops the mail (status `superseded`) without sending.
 */
export interface LinkMinter {
  mint(db: Executor, mail: { readonly id: string; readonly userId: string; readonly purpose: LinkPurpose; readonly recipient: string; readonly createdAt: string }): Promise<string | null>;
}
