import { type Config, ConfigError } from '../config.js';
import { createServices } from '../composition-root.js';
import { describeDatabase, requireExisting } from '../db/database.js';
import { redactSecrets } from '../lib/redact.js';
import { outcomeReporter } from '../mail/ipc.js';
import { noArguments } from './usage.js';

export const MAIL_DELIVER_USAGE = `  mail deliver                           send the mail outbox until SIGTERM or SIGINT, nothing else
                                         (MAIL_WORKER=external; serve forks it with the default)`;

/** One JSON line on stderr, as the server's log is read: the child has no pino of its own. */
function log(level: number, msg: string, fields: Record<string, unknown> = {}): void {
  console.error(JSON.stringify({ level, time: Date.now(), pid: process.pid, msg, ...fields }));
}

/**
 * Resolves on SIGTERM, SIGINT, or the IPC channel closing: the server that forked this process is
 * gone. Later signals change nothing: a Ctrl-C reaches the server and its child at once, and the
 * server then sends SIGTERM too, which must not cut the round short; the stop is bounded by time.
 */
function stopRequested(): Promise<string> {
  return new Promise((resolve) => {
    process.on('SIGTERM', () => resolve('SIGTERM'));
    process.on('SIGINT', () => resolve('SIGINT'));
    // Even a SIGKILLed parent closes the channel: its child must not deliver on, orphaned. The
    // channel may have closed already, while this process was starting.
    if (process.send !== undefined && !process.connected) resolve('parent gone');
    process.once('disconnect', () => resolve('parent gone'));
  });
}

/**
 * `rz-auth mail deliver`: only the mail delivery loop, against the configured store (docs/email.md).
 * Several may run: each mail is claimed under a lease (src/mail/queue.ts). On a stop it finishes
 * the round in progress, closes the SMTP connections and exits; a round still running after
 * SHUTDOWN_TIMEOUT_MS is cut short (its mails' leases lapse and they are sent again).
 */
export async function deliverMail(args: string[], config: Config): Promise<void> {
  noArguments(args, 'mail deliver');
  if (config.mail === null) throw new ConfigError('mail deliver needs SMTP_URL (with MAIL_FROM and PUBLIC_URL): with mail off there is nothing to send');
  requireExisting(config.database);
  const stopped = stopRequested();
  const send = process.send?.bind(process);
  // Forked by serve: the outcomes go to the server, whose registry METRICS_ADDR shows.
  const reporter = send && process.connected ? outcomeReporter((message, done) => (process.connected ? send(message, undefined, {}, () => done()) : done())) : null;
  const onError = (error: unknown, context: string) => log(50, context, { err: redactSecrets(error instanceof Error ? error.message : String(error)) });
  const services = await createServices({ ...config, metrics: null }, { onError, ...(reporter ? { mailCount: reporter.count } : {}) });
  // The delivery timer does not hold a process open (a server's listener does): this one must stay until told to stop.
  const alive = setInterval(() => {}, 60_000);
  services.mailDelivery?.start();
  log(30, 'delivering mail', { database: describeDatabase(config.database) });
  const why = await stopped;
  log(30, 'stopping mail delivery', { reason: why });
  clearInterval(alive);
  setTimeout(() => {
    log(50, 'mail delivery stop timed out');
    process.exit(1);
  }, config.shutdownTimeoutMs).unref();
  try {
    await services.close();
  } finally {
    await reporter?.close();
    if (process.connected) process.disconnect();
    // Nothing should hold the process now; if something does, it still must not stay behind.
    setTimeout(() => process.exit(), 1000).unref();
  }
}
