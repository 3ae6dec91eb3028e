import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { tempDir } from '../helpers/app.js';
import { storeContract } from './contract.js';

storeContract('SQLite', () => {
  const dir = tempDir();
  return {
    open: async () => openDatabase({ kind: 'sqlite', path: join(dir.dir, 'rz.db'), synchronous: 'NORMAL' }),
    cleanup: async () => dir.remove(),
  };
});
