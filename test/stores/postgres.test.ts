import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { changeTransaction } from '../../src/changes/store.js';
import { openDatabase } from '../../src/db/database.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/services.js';
import { type StoreHarness, storeContract } from './contract.js';
import { auditStoreContract } from './audit-contract.js';
import { lifecycleStoreContract } from './lifecycle-contract.js';
import { platformStoreContract } from './platform-contract.js';
import { sessionStoreContract } from './session-contract.js';
import { webhookStoreContract } from './webhook-contract.js';
import { webhookFairnessContract } from './webhook-fairness-contract.js';
import { listStoreContract } from './list-contract.js';
import { mailStoreContract } from './mail-contract.js';
import { linkStoreContract } from './link-contract.js';
import { mfaStoreContract } from './mfa-contract.js';
import { deviceStoreContract } from './device-contract.js';
import { derivedStoreContract } from './derived-contract.js';

const available = await postgresAvailable();

const postgres = (): StoreHarness => {
  let drop = async () => {};
  return {
    open: async () => {
      const fresh = await freshPostgresDatabase();
      drop = fresh.drop;
      return openDatabase({ kind: 'postgres', url: fresh.url, poolSize: 10 });
    },
    cleanup: () => drop(),
  };
};

describe.skipIf(!available)('PostgreSQL', () => {
  storeContract('PostgreSQL', postgres);
  platformStoreContract('PostgreSQL', postgres);
  auditStoreContract('PostgreSQL', postgres);
  sessionStoreContract('PostgreSQL', postgres);
  lifecycleStoreContract('PostgreSQL', postgres);
  webhookStoreContract('PostgreSQL', postgres);
  webhookFairnessContract('PostgreSQL', postgres);
  listStoreContract('PostgreSQL', postgres);
  mailStoreContract('PostgreSQL', postgres);
  linkStoreContract('PostgreSQL', postgres);
  mfaStoreContract('PostgreSQL', postgres);
  deviceStoreContract('PostgreSQL', postgres);
  derivedStoreContract('PostgreSQL', postgres);
});

// A transaction that records no change (the usage flush) does not queue on the change log's lock,
// so it can still deadlock with one that does; PostgreSQL then aborts one of the two, and a
// client whose rotation or revocation it was got 503.
describe.skipIf(!available)('PostgreSQL: a change transaction aborted to break a deadlock', () => {
  it('is run again, work included, and commits', async () => {
    const fresh = await freshPostgresDatabase();
    const { db, close } = await openDatabase({ kind: 'postgres', url: fresh.url, poolSize: 4 });
    try {
      await sql`create table rows_to_lock (id int primary key, v int not null)`.execute(db);
      await sql`insert into rows_to_lock values (1, 0), (2, 0)`.execute(db);
      const other = await db.startTransaction().execute();
      // The other side looks for the deadlock long after the change transaction does, so it is
      // the change transaction that PostgreSQL aborts.
      await sql`set local deadlock_timeout = '30s'`.execute(other);
      await sql`update rows_to_lock set v = v + 1 where id = 1`.execute(other);
      let runs = 0;
      // A run again before the other side's update of row 2 could take row 2 first and deadlock
      // once more: it waits until the other side has committed.
      let otherCommitted = (): void => {};
      const committed = new Promise<void>((resolve) => (otherCommitted = resolve));
      const change = changeTransaction(db, async (trx) => {
        runs++;
        if (runs > 1) await committed;
        await sql`update rows_to_lock set v = v + 10 where id = 2`.execute(trx);
        await sql`update rows_to_lock set v = v + 10 where id = 1`.execute(trx);
        return runs;
      });
      // Until row 2 is the change transaction's (a fixed sleep is not enough on a loaded machine).
      const rowTwoTaken = () =>
        db.transaction().execute((trx) => sql`select 1 from rows_to_lock where id = 2 for update nowait`.execute(trx)).then(
          () => false,
          (error: unknown) => (error as { code?: string }).code === '55P03',
        );
      for (const deadline = Date.now() + 10_000; !(await rowTwoTaken()); await sleep(20)) {
        if (Date.now() > deadline) throw new Error('the change transaction never took row 2');
      }
      // Row 2 is the change transaction's now: this waits for it, which waits for row 1.
      await sql`update rows_to_lock set v = v + 1 where id = 2`.execute(other);
      await other.commit().execute();
      otherCommitted();
      expect(await change).toBe(2);
      const rows = await sql<{ id: number; v: number }>`select id, v from rows_to_lock order by id`.execute(db);
      expect(rows.rows).toEqual([{ id: 1, v: 11 }, { id: 2, v: 11 }]);
    } finally {
      await close();
      await fresh.drop();
    }
  });
});
