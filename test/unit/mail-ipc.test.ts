import { describe, expect, it, vi } from 'vitest';
import { addOutcomes, type OutcomesMessage, outcomeReporter } from '../../src/mail/ipc.js';
import type { DeliveryOutcome } from '../../src/observability/metrics/queues.js';

/** The delivery child's counts reach the server's `rz_mail_deliveries_total` (src/mail/ipc.ts). */
describe('mail outcomes over the IPC channel', () => {
  const tally = () => {
    const seen: DeliveryOutcome[] = [];
    return { seen, count: (o: DeliveryOutcome) => void seen.push(o) };
  };

  it('sends what was counted in one message, nothing when nothing was, and each outcome is added once by the server', async () => {
    const sent: OutcomesMessage[] = [];
    const reporter = outcomeReporter((message, done) => {
      sent.push(message);
      done();
    });
    reporter.count('success');
    reporter.count('success');
    reporter.count('gave_up');
    await reporter.close();
    await reporter.close();
    expect(sent).toEqual([{ type: 'mail-outcomes', counts: { success: 2, failure: 0, gave_up: 1 } }]);
    const server = tally();
    addOutcomes(sent[0], server.count);
    expect(server.seen.sort()).toEqual(['gave_up', 'success', 'success']);
  });

  it('flushes about once a second while the child runs', async () => {
    vi.useFakeTimers();
    try {
      const sent: OutcomesMessage[] = [];
      const reporter = outcomeReporter((message, done) => (sent.push(message), done()));
      reporter.count('failure');
      vi.advanceTimersByTime(1000);
      expect(sent).toEqual([{ type: 'mail-outcomes', counts: { success: 0, failure: 1, gave_up: 0 } }]);
      await reporter.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([null, 'x', { type: 'other', counts: { success: 1 } }, { type: 'mail-outcomes' }, { type: 'mail-outcomes', counts: { success: -1, failure: 1.5, gave_up: 1e9, other: 3 } }])(
    'adds nothing for a message that is not well-formed counts: %j',
    (message) => {
      const server = tally();
      addOutcomes(message, server.count);
      expect(server.seen).toEqual([]);
    },
  );
});
