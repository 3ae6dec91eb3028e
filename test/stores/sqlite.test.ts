import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';
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

const sqlite = (): StoreHarness => {
  const dir = tempDir();
  return {
    open: async () => openDatabase({ kind: 'sqlite', path: join(dir.dir, 'rz.db'), synchronous: 'NORMAL', cacheKiB: 2048 }),
    cleanup: async () => dir.remove(),
  };
};

storeContract('SQLite', sqlite);
platformStoreContract('SQLite', sqlite);
auditStoreContract('SQLite', sqlite);
sessionStoreContract('SQLite', sqlite);
lifecycleStoreContract('SQLite', sqlite);
webhookStoreContract('SQLite', sqlite);
webhookFairnessContract('SQLite', sqlite);
listStoreContract('SQLite', sqlite);
mailStoreContract('SQLite', sqlite);
linkStoreContract('SQLite', sqlite);
mfaStoreContract('SQLite', sqlite);
deviceStoreContract('SQLite', sqlite);
derivedStoreContract('SQLite', sqlite);

describe('SQLite connection settings', () => {
  it.each([2048, 65536])('sizes the page cache from SQLITE_CACHE_KIB (%i KiB), not the driver default', async (cacheKiB) => {
    const dir = tempDir();
    const database = await openDatabase({ kind: 'sqlite', path: join(dir.dir, 'rz.db'), synchronous: 'NORMAL', cacheKiB });
    try {
      const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(database.db);
      expect(rows).toEqual([{ cache_size: -cacheKiB }]);
    } finally {
      await database.close();
      dir.remove();
    }
  });
});
