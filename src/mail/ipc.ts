import type { DeliveryCount, DeliveryOutcome } from '../observability/metrics/queues.js';

/**
 * What a delivery child (`rz-auth mail deliver` forked by `serve`) tells its parent over the IPC
 * channel: the outcomes it counted since its last message. The parent owns the metrics registry
 * (METRICS_ADDR), so `rz_mail_deliveries_total` is scraped there. One small message a second at
 * most, never one per mail: the parent is the API's process, whose CPU this is all about.
 */
export interface OutcomesMessage {
  readonly type: 'mail-outcomes';
  readonly counts: Readonly<Record<DeliveryOutcome, number>>;
}

const OUTCOMES: readonly DeliveryOutcome[] = ['success', 'failure', 'gave_up'];
const FLUSH_MS = 1000;
/** More than a child could send in a second; a message claiming more is not one of ours. */
const MAX_COUNT = 1_000_000;

const zero = (): Record<DeliveryOutcome, number> => ({ success: 0, failure: 0, gave_up: 0 });

/** In the child: counts outcomes and sends them to the parent every second and at the end. */
export interface OutcomeReporter {
  readonly count: DeliveryCount;
  /** Sends what is counted and stops the timer; resolves once the message is written. */
  close(): Promise<void>;
}

export function outcomeReporter(send: (message: OutcomesMessage, done: () => void) => void): OutcomeReporter {
  let counts = zero();
  const flush = (): Promise<void> => {
    if (OUTCOMES.every((o) => counts[o] === 0)) return Promise.resolve();
    const message: OutcomesMessage = { type: 'mail-outcomes', counts };
    counts = zero();
    return new Promise((resolve) => send(message, resolve));
  };
  const timer = setInterval(() => void flush(), FLUSH_MS).unref();
  return {
    count: (outcome) => (counts[outcome] += 1),
    close() {
      clearInterval(timer);
      return flush();
    },
  };
}

/** In the parent: adds a child's counted outcomes to `count`; anything else on the channel is ignored. */
export function addOutcomes(message: unknown, count: DeliveryCount): void {
  const m = message as Partial<OutcomesMessage> | null;
  if (m?.type !== 'mail-outcomes' || typeof m.counts !== 'object' || m.counts === null) return;
  for (const outcome of OUTCOMES) {
    const n = m.counts[outcome];
    if (!Number.isInteger(n) || n < 0 || n > MAX_COUNT) continue;
    for (let i = 0; i < n; i++) count(outcome);
  }
}
