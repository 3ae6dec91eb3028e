import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as a mail client reads it, with the SMTP envelope it came in. */
export interface ReceivedMail {
  /** MAIL FROM and RCPT TO, as the relay saw them (not the headers). */
  readonly envelope: { readonly from: string | null; readonly to: readonly string[] };
  readonly messageId: string | undefined;
  readonly subject: string | undefined;
  /** Addresses of the From and To headers. */
  readonly from: readonly string[];
  readonly to: readonly string[];
  /** Every header, lower-cased name to its values as sent (unfolded). */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  /** The raw header block, exactly as received. */
  readonly rawHeaders: string;
  readonly text: string;
  /** The HTML part as sent (not sanitised). */
  readonly html: string;
  readonly contentType: string;
  /** Every http(s) link of the text part and every href of the HTML part. */
  readonly links: readonly string[];
}

/** What the server answers a message: accepted (null) or an SMTP error such as `451 try later`. */
export type Answer = { readonly code: number; readonly message: string } | null;

export interface TestSmtpServer {
  readonly port: number;
  /** An SMTP_URL for rz-auth: plain SMTP to this loopback server (`tls=off`). */
  readonly url: string;
  /** Every message accepted so far, in arrival order. */
  readonly messages: ReceivedMail[];
  /** Every message received, accepted or refused, in arrival order. */
  readonly attempts: ReceivedMail[];
  /** Decides the answer of each received message (accept all by default); may wait. */
  answer: (mail: ReceivedMail, attempt: number) => Answer | Promise<Answer>;
  /** Resolves once `count` messages have been accepted; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

const addresses = (value: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));

const linksOf = (text: string, html: string): string[] => [
  ...(text.match(/https?:\/\/[^\s<>"]+/g) ?? []),
  ...[...html.matchAll(/href="([^"]*)"/g)].map((m) => (m[1] ?? '').replace(/&amp;/g, '&')),
];

function headerMap(raw: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of raw.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).toLowerCase();
    map.set(name, [...(map.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return map;
}

async function parse(raw: Buffer, envelope: ReceivedMail['envelope']): Promise<ReceivedMail> {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const rawHeaders = end === -1 ? text : text.slice(0, end);
  const parsed = await simpleParser(raw);
  const html = typeof parsed.html === 'string' ? parsed.html : '';
  const plain = parsed.text ?? '';
  return {
    envelope,
    messageId: parsed.messageId,
    subject: parsed.subject,
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    headers: headerMap(rawHeaders),
    rawHeaders,
    text: plain,
    html,
    contentType: parsed.headers.get('content-type') === undefined ? '' : String((parsed.headers.get('content-type') as { value?: string }).value ?? ''),
    links: linksOf(plain, html),
  };
}

/**
 * A real SMTP server (the nodemailer project's `smtp-server`) on a random loopback port, in this
 * process: it reads every message with `mailparser`, as a mail client would. No TLS (rz-auth
 * reaches it with `?tls=off`, allowed for loopback only) and no authentication.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const arrived = new EventEmitter();
  const state: TestSmtpServer = {
    port: 0,
    url: '',
    messages: [],
    attempts: [],
    answer: () => null,
    waitFor(count, timeoutMs = 10_000) {
      if (state.messages.length >= count) return Promise.resolve(state.messages);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          arrived.off('message', check);
          reject(new Error(`${state.messages.length} of ${count} messages arrived in ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (state.messages.length < count) return;
          clearTimeout(timer);
          arrived.off('message', check);
          resolve(state.messages);
        };
        arrived.on('message', check);
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const envelope = { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null, to: session.envelope.rcptTo.map((r) => r.address) };
        parse(Buffer.concat(chunks), envelope)
          .then(async (mail) => {
            state.attempts.push(mail);
            const answer = await state.answer(mail, state.attempts.length);
            if (answer) return callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
            state.messages.push(mail);
            arrived.emit('message');
            callback();
          })
          .catch((error: unknown) => callback(error as Error));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return Object.assign(state, { port, url: `smtp://127.0.0.1:${port}?tls=off` });
}
