import type { Config } from '../config.js';
import type { Services } from '../composition-root.js';
import type { MailStatus } from '../mail/queue.js';
import { parseOnce, UsageError } from './usage.js';

type WithServices = (config: Config, run: (services: Services) => Promise<void>, access?: 'read') => Promise<void>;
type Command = (args: string[], config: Config) => Promise<void>;

const STATUSES: readonly MailStatus[] = ['pending', 'sent', 'failed', 'superseded'];
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 100_000;

export const MAIL_USAGE = `  mail list [--status pending|sent|failed|superseded] [--limit N]
                                         the mail outbox, newest first, as JSON lines: recipient,
                                         template, attempts, last error (never a link: none is stored)`;

/** `rz-auth mail list`: what the outbox holds, for the operator (docs/email.md). */
export function mailCommands(withServices: WithServices): Record<string, Command> {
  return {
    async 'mail list'(args, config) {
      const { values } = parseOnce({ args, options: { status: { type: 'string' }, limit: { type: 'string' } } });
      const status = values.status as MailStatus | undefined;
      if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      const limit = values.limit === undefined ? DEFAULT_LIMIT : /^\d{1,6}$/.test(values.limit) ? Number(values.limit) : Number.NaN;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`);
      await withServices(
        config,
        async (services) => {
          for (const m of await services.mailOutbox.list(status, limit)) {
            console.log(JSON.stringify({ id: m.id, recipient: m.recipient, template: m.template, status: m.status, attempts: m.attempts, last_error: m.lastError, created_at: m.createdAt, next_attempt_at: m.nextAttemptAt, sent_at: m.sentAt }));
          }
        },
        'read',
      );
    },
  };
}
