import type { LinkPurpose, MailTemplate } from './outbox.js';

/** A mail ready to send: a fixed subject (no user input reaches a header) and both parts. */
export interface RenderedMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** The fragment key of each link purpose: the token rides in the fragment, so it never reaches a server log, a proxy or a Referer (§11.3). */
const FRAGMENT: Readonly<Record<LinkPurpose, string>> = { verify_email: 'verify-email', reset_password: 'reset', change_email: 'confirm-email' };

/** `<PUBLIC_URL>developers#<key>=<token>`: built from PUBLIC_URL only, never from a request's Host. */
export function linkFor(publicUrl: URL, purpose: LinkPurpose, token: string): string {
  const url = new URL('developers', publicUrl);
  url.hash = `${FRAGMENT[purpose]}=${encodeURIComponent(token)}`;
  return url.href;
}

/** The page a notice points to: it acts on nothing, and shows the account only after a login. */
const pageOf = (publicUrl: URL) => new URL('developers', publicUrl).href;

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every interpolated value in the HTML part goes through this, links included. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

/**
 * Control characters (CR, LF, NUL...) become spaces, `://` is broken so a mail client does not make
 * a link of a value (a token named after a phishing URL), and a value is cut to 200 characters:
 * what a user typed cannot reshape the mail or add a link to it. The links are rz-auth's alone.
 */
const clean = (value: string | undefined): string =>
  (value ?? '')
    .replace(/[\x00-\x1f\x7f]/g, ' ')
    .replace(/:\/\//g, ' ://')
    .slice(0, 200);

/** A paragraph: literal text, and values that are interpolated (escaped in HTML). */
type Part = string | { readonly value: string } | { readonly link: string };
type Paragraph = readonly Part[];

interface Content {
  readonly subject: string;
  readonly paragraphs: readonly Paragraph[];
}

const v = (value: string | undefined) => ({ value: clean(value) });

const IGNORE = 'If you did not ask for this, you can ignore this mail: nothing changes until the link is used.';
const NOT_YOU = (page: string): Paragraph => ['If this was not you, log in at ', { link: page }, ' and change your password at once.'];

type Data = Readonly<Record<string, string>>;

/** Each template's subject and paragraphs; `link` is the minted link (link mails) or the Developers page (notices). */
const CONTENT: Readonly<Record<MailTemplate, (data: Data, link: string) => Content>> = {
  verify_email: (d, link) => ({
    subject: 'Confirm your email address',
    paragraphs: [['Hello ', v(d.username), ','], ['Confirm that this address is yours by opening this link:'], [{ link }], ['The link works once and expires. ', IGNORE]],
  }),
  reset_password: (d, link) => ({
    subject: 'Reset your password',
    paragraphs: [['Hello ', v(d.username), ','], ['Someone asked to reset the password of your account. Choose a new password here:'], [{ link }], ['The link works once and expires soon. ', IGNORE]],
  }),
  confirm_email_change: (d, link) => ({
    subject: 'Confirm your new email address',
    paragraphs: [['Hello ', v(d.username), ','], ['Confirm that this address should become the email of your account:'], [{ link }], ['The link works once and expires. ', IGNORE]],
  }),
  email_change_requested: (d, page) => ({
    subject: 'A change of your email address was requested',
    paragraphs: [['Hello ', v(d.username), ','], ['Someone asked to change the email address of your account to ', v(d.new_email), '. It changes only when that address confirms it.'], NOT_YOU(page)],
  }),
  email_changed: (d, page) => ({
    subject: 'Your email address was changed',
    paragraphs: [['Hello ', v(d.username), ','], ['The email address of your account was changed to ', v(d.new_email), '. Mail about your account now goes there.'], NOT_YOU(page)],
  }),
  password_changed: (d, page) => ({
    subject: 'Your password was changed',
    paragraphs: [['Hello ', v(d.username), ','], ['The password of your account was changed.'], NOT_YOU(page)],
  }),
  password_reset: (d, page) => ({
    subject: 'Your password was reset',
    paragraphs: [['Hello ', v(d.username), ','], ['The password of your account was reset with a link sent to this address, and every session was ended.'], NOT_YOU(page)],
  }),
  token_leaked: (d, page) => ({
    subject: 'A token of yours was reported leaked and revoked',
    paragraphs: [
      ['Hello ', v(d.username), ','],
      ['Your token ', v(d.token_name), ' (', v(d.token_prefix), '…) was found where it should not be and reported to rz-auth, which revoked it. It no longer works.'],
      ['Create a new token at ', { link: page }, ' and replace the old one where you used it.'],
    ],
  }),
  device_approved: (d, page) => ({
    subject: 'A device was given access to your account',
    paragraphs: [
      ['Hello ', v(d.username), ','],
      ['You approved a login of ', v(d.client_name), ' on a device that calls itself ', v(d.device_name), ', requested from ', v(d.request_ip), '. It received an API token of yours.'],
      ['If this was not you, revoke that token at ', { link: page }, ' and change your password.'],
    ],
  }),
  mfa_factor_added: (d, page) => ({
    subject: 'A second factor was added to your account',
    paragraphs: [['Hello ', v(d.username), ','], ['The second factor ', v(d.factor_name), ' was added to your account. From now on a login asks for it.'], NOT_YOU(page)],
  }),
  mfa_factor_removed: (d, page) => ({
    subject: 'A second factor was removed from your account',
    paragraphs: [['Hello ', v(d.username), ','], ['The second factor ', v(d.factor_name), ' was removed from your account, and every other session was ended.'], NOT_YOU(page)],
  }),
  mfa_recovery_codes_generated: (d, page) => ({
    subject: 'New recovery codes were made for your account',
    paragraphs: [['Hello ', v(d.username), ','], ['A new set of recovery codes was made for your account; the previous codes no longer work.'], NOT_YOU(page)],
  }),
  mfa_recovery_code_used: (d, page) => ({
    subject: 'A recovery code of yours was used',
    paragraphs: [['Hello ', v(d.username), ','], ['A recovery code was used to sign in to your account. Codes left: ', v(d.recovery_codes_remaining), '.'], NOT_YOU(page)],
  }),
  mfa_locked: (d, page) => ({
    subject: 'Second factor checks of your account were locked',
    paragraphs: [
      ['Hello ', v(d.username), ','],
      ['Ten wrong second factors were tried on your account within 15 minutes, so no second factor is accepted until ', v(d.locked_until), '. Someone may know your password.'],
      NOT_YOU(page),
    ],
  }),
  mfa_reset: (d, page) => ({
    subject: 'The second factors of your account were removed',
    paragraphs: [
      ['Hello ', v(d.username), ','],
      ['The operator of rz-auth removed every second factor and recovery code of your account and ended every session. Log in with your password and add a second factor again.'],
      ['If you did not ask for this, change your password at ', { link: page }, ' at once and tell the operator.'],
    ],
  }),
};

const textOf = (p: Paragraph) => p.map((part) => (typeof part === 'string' ? part : 'value' in part ? part.value : part.link)).join('');
const htmlOf = (p: Paragraph) =>
  `<p>${p.map((part) => (typeof part === 'string' ? escapeHtml(part) : 'value' in part ? escapeHtml(part.value) : `<a href="${escapeHtml(part.link)}">${escapeHtml(part.link)}</a>`)).join('')}</p>`;

/**
 * The mail of `template` with `data`: `link` is the minted link for a link mail, null for a notice
 * (which points to the Developers page, a link that acts on nothing without a login).
 */
export function renderMail(template: MailTemplate, data: Data, link: string | null, publicUrl: URL): RenderedMail {
  const { subject, paragraphs } = CONTENT[template](data, link ?? pageOf(publicUrl));
  const text = `${paragraphs.map(textOf).join('\n\n')}\n\n-- \nrz-auth\n`;
  const html = `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>\n${paragraphs.map(htmlOf).join('\n')}\n<p>rz-auth</p>\n</body></html>\n`;
  return { subject, text, html };
}
