import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { TokenStore } from '../../src/tokens/store.js';
import { UsageRecorder } from '../../src/tokens/usage.js';
import { type TestApp, startTestApp } from '../helpers/app.js';
import { createApiToken, json, signup } from '../helpers/api.js';

// Regression: flushes were chained with then(work), so a flush that rejected (here the store and
// then the reporter both failing) was kept: every later flush was skipped and answered with the same
// rejection, and no last-used time was written again until the process restarted.
describe('last-used flushes after a failed one', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a flush that failed, reporter and all, does not stop the next one from writing', async () => {
    const { db } = t.services.database;
    const user = await signup(t);
    const { id } = await createApiToken(t, user.jwt);
    let reports = 0;
    const recorder = new UsageRecorder(new TokenStore(db), 60_000, () => {
      reports++;
      throw new Error('the reporter failed too');
    });
    const usedAt = t.services.clock.now();
    recorder.record(id, usedAt, '203.0.113.5');

    await sql`pragma query_only = on`.execute(db);
    await expect(recorder.flush()).rejects.toThrow('the reporter failed too');
    await sql`pragma query_only = off`.execute(db);
    await recorder.flush();

    expect(reports).toBe(1);
    const listed = (await json(t, 'GET', '/api/tokens', undefined, user.jwt)).json() as { tokens: Array<{ id: string; last_used_at: string | null }> };
    expect(listed.tokens.find((token) => token.id === id)?.last_used_at).toBe(iso(usedAt));
  });
});
