import { ConfigError, type Env, int, oneOf, raw } from '../lib/env-vars.js';
import { isLoopbackHost, publicUrlFrom } from '../lib/public-url.js';

/** How rz-auth reaches the operator's SMTP server (SMTP_URL). */
export interface SmtpSettings {
  readonly host: string;
  readonly port: number;
  /** smtps://: TLS from the first byte (RFC 8314 implicit TLS). */
  readonly implicitTls: boolean;
  /** smtp://: STARTTLS is required, so a relay that does not offer it is refused; false only with `?tls=off` to a loopback host. */
  readonly requireStartTls: boolean;
  readonly auth: { readonly user: string; readonly pass: string } | null;
  /** SMTP_TIMEOUT_SECONDS: the longest wait for the connection, for the greeting, and for each reply. */
  readonly timeoutMs: number;
}

/**
 * MAIL_WORKER, which process sends the outbox (docs/email.md): `process`, a child that `serve` forks
 * and supervises (`rz-auth mail deliver`), so sending costs the API's process no CPU; `inline`,
 * the API's process itself; `external`, none that `serve` starts: the operator runs the command.
 */
export const MAIL_WORKERS = ['process', 'inline', 'external'] as const;
export type MailWorkerMode = (typeof MAIL_WORKERS)[number];

/** Mail on (SMTP_URL set): where links point, who mails come from, and the transport (docs/email.md). */
export interface MailSettings {
  readonly worker: MailWorkerMode;
  /** PUBLIC_URL with a trailing slash: every link in a mail starts with it, never with a request's Host. */
  readonly publicUrl: URL;
  /** MAIL_FROM, split so the envelope sender is the bare address. */
  readonly from: { readonly name: string; readonly address: string };
  readonly smtp: SmtpSettings;
}

/**
 * SMTP_URL: `smtp://user:pass@host:587` (STARTTLS required) or `smtps://user:pass@host:465`. The
 * only query parameter is `tls=off`, allowed for a loopback relay alone (a local MTA or a test
 * server): a password or a reset link never crosses a network in clear. Messages never repeat the
 * URL, which holds a password.
 */
function parseSmtpUrl(value: string): Omit<SmtpSettings, 'timeoutMs'> {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !['smtp:', 'smtps:'].includes(url.protocol) || url.hostname === '') {
    throw new ConfigError('SMTP_URL must be smtp://user:pass@host:587 or smtps://user:pass@host:465');
  }
  if (url.pathname !== '' && url.pathname !== '/') throw new ConfigError('SMTP_URL must not have a path');
  const params = [...url.searchParams.keys()];
  if (params.some((name) => name !== 'tls') || url.hash !== '') throw new ConfigError('SMTP_URL takes no parameter but tls=off');
  const tlsOff = url.searchParams.has('tls');
  if (tlsOff && (url.searchParams.getAll('tls').join() !== 'off' || url.protocol === 'smtps:')) throw new ConfigError('SMTP_URL: tls=off is the only value, and only for smtp://');
  if (tlsOff && !isLoopbackHost(url.hostname)) throw new ConfigError('SMTP_URL: tls=off is allowed for a loopback relay only (127.0.0.1, ::1, localhost)');
  const implicitTls = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const auth = user === '' ? null : { user, pass: decodeURIComponent(url.password) };
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? (implicitTls ? 465 : 587) : Number(url.port), implicitTls, requireStartTls: !implicitTls && !tlsOff, auth };
}

/** PUBLIC_URL, required with mail on: every link in a mail is built from it. */
function parsePublicUrl(env: Env): URL {
  const url = publicUrlFrom(env);
  if (url === null) throw new ConfigError('PUBLIC_URL must be set when SMTP_URL is: every link in a mail is built from it');
  return url;
}

/** `"Name" <address>` or a bare address; no CR, LF or angle brackets elsewhere can reach the From header. */
const FROM = /^(?:"([^"\\\r\n\x00-\x1f]{0,100})"\s*)?<([^\s<>"(),;:@\\]{1,64}@[A-Za-z0-9.-]{1,253})>$|^([^\s<>"(),;:@\\]{1,64}@[A-Za-z0-9.-]{1,253})$/;

function parseFrom(env: Env): MailSettings['from'] {
  const value = raw(env, 'MAIL_FROM');
  if (value === undefined) throw new ConfigError('MAIL_FROM must be set when SMTP_URL is, e.g. "rz-auth" <no-reply@example.com>');
  const match = FROM.exec(value);
  const address = match?.[2] ?? match?.[3];
  if (!match || address === undefined) throw new ConfigError(`MAIL_FROM must be "Name" <address@example.com> or address@example.com, got "${value.slice(0, 100)}"`);
  return { name: match[1] ?? '', address };
}

/** Mail settings from SMTP_URL, MAIL_FROM and PUBLIC_URL; null (mail off) when SMTP_URL is unset. */
export function mailFrom(env: Env): MailSettings | null {
  // Checked with mail off too: a misspelt value is refused now, not once SMTP_URL is set.
  const worker = oneOf(env, 'MAIL_WORKER', MAIL_WORKERS, 'process');
  const smtpUrl = raw(env, 'SMTP_URL');
  if (smtpUrl === undefined) return null;
  const smtp = { ...parseSmtpUrl(smtpUrl), timeoutMs: int(env, 'SMTP_TIMEOUT_SECONDS', 30, 1, 300) * 1000 };
  return { worker, publicUrl: parsePublicUrl(env), from: parseFrom(env), smtp };
}
