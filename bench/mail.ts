import { parseDatabase } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { enqueueMail } from '../src/mail/outbox.js';
import type { Store } from './env.js';

/** Mails queued at a steady rate while it runs, as the account flows would queue them. */
export interface MailFeed {
  stop(): Promise<void>;
}

const TICK_MS = 50;

/**
 * Writes `perSecond` mails a second into the outbox of `store`, straight into the database (in
 * batches every 50 ms, each its own transaction), from this process: the server under test pays
 * only for sending them, as it would for mails queued by requests measured elsewhere.
 */
export async function startMailFeed(store: Store, perSecond: number): Promise<MailFeed> {
  const database = await openDatabase(parseDatabase(store.env));
  const perTick = Math.max(1, Math.round((perSecond * TICK_MS) / 1000));
  let n = 0;
  let running: Promise<void> = Promise.resolve();
  let failure: unknown = null;
  const timer = setInterval(() => {
    running = running
      .then(() =>
        database.db.transaction().execute(async (trx) => {
          for (let i = 0; i < perTick; i++) await enqueueMail(trx, { userId: null, recipient: `bench-${(n += 1)}@example.com`, template: 'password_changed', data: { username: 'bench' } }, Date.now());
        }),
      )
      .catch((error: unknown) => {
        failure ??= error;
      });
  }, TICK_MS);
  let stopped: Promise<void> | null = null;
  const stop = async () => {
    clearInterval(timer);
    await running;
    await database.close();
    if (failure !== null) throw new Error(`the mail feed failed: ${failure instanceof Error ? failure.message : String(failure)}`);
  };
  // Stopped once: after the slice, and again (a no-op) in the slice's clean-up.
  return { stop: () => (stopped ??= stop()) };
}

/** How many messages the loopback relay has accepted so far. */
export async function mailsAccepted(sinkUrl: string): Promise<number> {
  return Number(await (await fetch(sinkUrl, { signal: AbortSignal.timeout(2000) })).text());
}
