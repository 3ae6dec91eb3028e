import { describe } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/services.js';
import { type StoreHarness, storeContract } from './contract.js';
import { auditStoreContract } from './audit-contract.js';
import { lifecycleStoreContract } from './lifecycle-contract.js';
import { platformStoreContract } from './platform-contract.js';
import { sessionStoreContract } from './session-contract.js';
import { webhookStoreContract } from './webhook-contract.js';

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
});
