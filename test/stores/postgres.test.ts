import { describe } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/services.js';
import { storeContract } from './contract.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL', () => {
  storeContract('PostgreSQL', () => {
    let drop = async () => {};
    return {
      open: async () => {
        const fresh = await freshPostgresDatabase();
        drop = fresh.drop;
        return openDatabase({ kind: 'postgres', url: fresh.url, poolSize: 10 });
      },
      cleanup: () => drop(),
    };
  });
});
