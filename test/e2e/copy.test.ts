import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { COPY_ORDER } from '../../src/db/copy.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createApiToken, json, registerApp, signup } from '../helpers/api.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { runCli } from '../helpers/server-process.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/services.js';

/**
 * `rz-auth copy` (docs/deployment.md, "Moving to PostgreSQL"): a deployment on SQLite moved to a fresh
 * PostgreSQL database, keys sealed under KEY_ENCRYPTION_KEY included; every credential issued before
 * the move works against a server on the copy.
 */
const onPostgres = await postgresAvailable();

describe('rz-auth copy', { timeout: 120_000 }, () => {
  const temp = tempDir();
  const source = `sqlite:${join(temp.dir, 'rz.db')}`;
  const keyEnv = { KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'), WEBHOOK_ALLOW_PRIVATE: 'true' };
  const issued: Record<string, string> = {};
  const drops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    const t = await startTestApp({ dir: temp.dir, env: keyEnv });
    try {
      const user = await signup(t);
      const app = await registerApp(t, user.jwt);
      Object.assign(issued, { jwt: user.jwt, api: (await createApiToken(t, user.jwt)).token, app: app.token });
      expect((await json(t, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', event_types: ['token.created'] }, user.jwt)).statusCode).toBe(201);
      await t.services.keys.rotate();
    } finally {
      await t.close();
    }
  }, 60_000);
  afterAll(async () => {
    for (const drop of drops) await drop();
    temp.remove();
  });

  it('copies every table of the schema: a table the list forgets fails here', async () => {
    const database = await openDatabase(loadConfig({ DATABASE_URL: source }).database);
    try {
      await migrateToLatest(database.db);
      const tables = (await database.db.introspection.getTables()).map((t) => t.name).filter((name) => !name.startsWith('kysely_'));
      expect(COPY_ORDER.map(([table]) => table).sort()).toEqual(tables.sort());
    } finally {
      await database.close();
    }
  });

  it.skipIf(!onPostgres)('SQLite to a fresh PostgreSQL: verified, and every token issued before works on a server on the copy', async () => {
    const target = await freshPostgresDatabase();
    drops.push(target.drop);
    const copied = await runCli(['copy', '--from', source, '--to', target.url], {});
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stderr).toContain(`rz-auth: copying sqlite:${join(temp.dir, 'rz.db')} to postgres://`);
    expect(copied.stdout).toMatch(/^copied\tsigning_keys\t2$/m);
    expect(copied.stdout).toMatch(new RegExp(`^verified\\t${COPY_ORDER.length} tables\\t\\d+ rows\\tcounts and checksums equal$`, 'm'));

    const t = await startTestApp({ env: { ...keyEnv, DATABASE_URL: target.url } });
    try {
      for (const token of Object.values(issued)) expect((await json(t, 'GET', '/api/me', undefined, token)).statusCode).toBe(200);
      // New rows get new numbers: the identity sequences moved past the copied ones.
      const user = await signup(t);
      expect((await createApiToken(t, user.jwt)).token).toMatch(/^rz_/);
      const stored = await t.services.database.db.selectFrom('signing_keys').select('private_jwk').execute();
      for (const row of stored) expect(row.private_jwk).toMatch(/^sealed:v1:/);

      const again = await runCli(['copy', '--from', source, '--to', target.url], {});
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/--to already holds data \(\d+ rows in users\): copy only into an empty database/);
    } finally {
      await t.close();
    }
  });

  it('a process on the sealed database without KEY_ENCRYPTION_KEY refuses to start: exit 2 naming the variable', async () => {
    const res = await runCli(['keys', 'list'], { DATABASE_URL: source });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^rz-auth: configuration error: signing key .* neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_OLD holds/);
  });

  it('refuses a --from file that does not exist, naming it; nothing is created', async () => {
    const missing = join(temp.dir, 'missing.db');
    const res = await runCli(['copy', '--from', `sqlite:${missing}`, '--to', `sqlite:${join(temp.dir, 'copy.db')}`], {});
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`--from: no database at ${missing}`);
    expect([existsSync(missing), existsSync(join(temp.dir, 'copy.db'))]).toEqual([false, false]);
  });
});
