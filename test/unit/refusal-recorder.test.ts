import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefusalRecorder } from '../../src/audit/refusals.js';
import { type TestApp, startTestApp } from '../helpers/app.js';

/** token.refused is counted in memory and written in batches: bounded memory, bounded writes. */
describe('allow-list refusal recorder', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const refusedOf = async (userId: string) => t.services.audit.list({ userId, type: 'token.refused', limit: 20_000 });

  it('holds at most 10,000 tokens between writes, and writes them all in one flush', async () => {
    const userId = randomUUID();
    const recorder = new RefusalRecorder((events) => t.services.audit.record(events), (error) => {
      throw error;
    });
    const now = t.services.clock.now();
    for (let i = 0; i <= 10_000; i++) recorder.note({ type: 'api_token', tokenId: randomUUID(), userId, name: 'ci', hint: 'rz_abcd' }, '192.0.2.1', now);
    await recorder.flush();
    expect(await refusedOf(userId)).toHaveLength(10_000);
  });

  it('a failed write is reported and does not stop the next flush', async () => {
    const userId = randomUUID();
    let fail = true;
    const reported: unknown[] = [];
    const recorder = new RefusalRecorder(
      async (events) => {
        if (fail) throw new Error('the database is away');
        await t.services.audit.record(events);
      },
      (error) => reported.push(error),
    );
    const token = { type: 'app_token' as const, tokenId: randomUUID(), userId, name: 'Asteroids', hint: 'rza_abcd' };
    recorder.note(token, '192.0.2.1', t.services.clock.now());
    await recorder.flush();
    expect(reported).toHaveLength(1);
    fail = false;
    recorder.note(token, '192.0.2.2', t.services.clock.now());
    recorder.note(token, '192.0.2.3', t.services.clock.now());
    await recorder.flush();
    const [event, ...more] = await refusedOf(userId);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ address: '192.0.2.2', details: { token_type: 'app_token', refusals: 2 } });
  });

  it('the first refusal of a token waited up to a minute for the batch: now it is written at once, the next ones coalesced as before', async () => {
    const userId = randomUUID();
    const batches: Array<Array<{ address: string | null; details: unknown }>> = [];
    const recorder = new RefusalRecorder(
      async (events) => {
        batches.push(events.map((e) => ({ address: e.address, details: e.details })));
        await t.services.audit.record(events);
      },
      (error) => {
        throw error;
      },
    );
    const token = { type: 'api_token' as const, tokenId: randomUUID(), userId, name: 'ci', hint: 'rz_abcd' };
    const now = t.services.clock.now();
    for (let i = 0; i < 5; i++) recorder.note(token, `192.0.2.${i + 1}`, now);
    // Started on the first refusal itself, not at the next interval.
    expect(batches).toEqual([[{ address: '192.0.2.1', details: expect.objectContaining({ refusals: 1 }) }]]);
    await recorder.flush();
    expect(batches.slice(1)).toEqual([[{ address: '192.0.2.2', details: expect.objectContaining({ refusals: 4 }) }]]);
    // Refused again in the next interval: coalesced, since it was refused in the one before.
    recorder.note(token, '192.0.2.9', now);
    expect(batches).toHaveLength(2);
    await recorder.flush();
    expect(batches).toHaveLength(3);
    // A whole interval without a refusal: the next one is news again.
    await recorder.flush();
    recorder.note(token, '192.0.2.10', now);
    expect(batches[3]).toEqual([{ address: '192.0.2.10', details: expect.objectContaining({ refusals: 1 }) }]);
    await recorder.flush();
    expect(await refusedOf(userId)).toHaveLength(4);
  });
});
