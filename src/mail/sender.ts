import nodemailer from 'nodemailer';
import type { MailSettings } from './config.js';
import type { RenderedMail } from './templates.js';

/** One message as the worker hands it to the transport. */
export interface OutgoingMail extends RenderedMail {
  /** The outbox id: `<id@PUBLIC_URL host>` is the Message-ID of every attempt, so a receiver can drop a repeat. */
  readonly id: string;
  /** The stored address: the envelope recipient, set explicitly, and the To header. */
  readonly recipient: string;
  readonly date: Date;
}

/** Sends one message; resolves when the server accepted it, rejects with the reason otherwise. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<void>;
  /** Closes the pooled connections. */
  close(): void;
}

/** Waits of one SMTP conversation (nodemailer's defaults are minutes long): a dead relay holds a lease no longer than this. */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const;
/** Connections kept open to the relay; each carries up to MAX_MESSAGES before it is renewed. */
const MAX_CONNECTIONS = 4;
const MAX_MESSAGES = 100;

/**
 * nodemailer's pooled SMTP transport to the operator's relay (SMTP_URL). STARTTLS is required
 * unless the operator chose `tls=off` for a loopback relay (src/mail/config.ts). The envelope is
 * given explicitly: the sender is MAIL_FROM's address and the only recipient the stored address,
 * so nothing in the headers can add a recipient.
 */
export function smtpSender(settings: MailSettings): MailSender {
  const { smtp, from, publicUrl } = settings;
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: MAX_CONNECTIONS,
    maxMessages: MAX_MESSAGES,
    host: smtp.host,
    port: smtp.port,
    secure: smtp.implicitTls,
    requireTLS: smtp.requireStartTls,
    ignoreTLS: !smtp.implicitTls && !smtp.requireStartTls,
    ...(smtp.auth ? { auth: { user: smtp.auth.user, pass: smtp.auth.pass } } : {}),
    ...SMTP_TIMEOUTS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const host = publicUrl.hostname;
  return {
    async send(mail) {
      await transport.sendMail({
        envelope: { from: from.address, to: [mail.recipient] },
        from: { name: from.name, address: from.address },
        to: mail.recipient,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        date: mail.date,
        messageId: `<${mail.id}@${host}>`,
        // RFC 3834: automatic mail, so vacation responders do not answer it.
        headers: { 'Auto-Submitted': 'auto-generated' },
      });
    },
    close: () => transport.close(),
  };
}
