import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadSqlite, openDatabase } from '../../src/db/database.js';

const require = createRequire(import.meta.url);

// Regression: better-sqlite3 12 aborted Node 24.19+ ("Assertion failed: (env) != nullptr" in
// Statement::~Statement) as soon as a statement was garbage-collected.
describe('SQLite driver', () => {
  it('loads the Node-API build on Node 22+ and the classic build on Node 20', () => {
    const major = Number(process.versions.node.split('.')[0]);
    const expected = major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
    expect(loadSqlite()).toBe(require(expected));
  });
});

describe('SQLite file shared by several processes', () => {
  const open = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rz-sqlite-'));
    const path = join(dir, 'rz.db');
    const database = await openDatabase({ kind: 'sqlite', path, synchronous: 'NORMAL', cacheKiB: 2048 });
    return { database, path, remove: async () => { await database.close(); rmSync(dir, { recursive: true, force: true }); } };
  };

  // Regression: with --workers, a transaction that read and then wrote failed at once with
  // SQLITE_BUSY_SNAPSHOT when another process wrote in between (a 500 on POST /api/apps/{id}/tokens).
  it('a transaction that reads then writes is not undone by another process writing in between', async () => {
    const { database, path, remove } = await open();
    const other = new (loadSqlite())(path, { timeout: 0 });
    try {
      await sql`create table probe (n integer)`.execute(database.db);
      let otherWrote = true;
      await database.db.transaction().execute(async (trx) => {
        await sql`select count(*) from probe`.execute(trx);
        try {
          other.prepare('insert into probe (n) values (1)').run();
        } catch {
          // The write lock is taken: the other process waits (here: gives up at once).
          otherWrote = false;
        }
        await sql`insert into probe (n) values (2)`.execute(trx);
      });
      expect(otherWrote).toBe(false);
      expect(other.prepare('select n from probe').pluck().all()).toEqual([2]);
    } finally {
      other.close();
      await remove();
    }
  });

  // Regression: SQLite migrations ran outside a transaction, so a process killed in the middle of one
  // left tables the migration table did not record, and every later start failed ("already exists").
  it('a migration that fails part-way leaves the file as it was', async () => {
    const { database, remove } = await open();
    try {
      const migrator = new Migrator({
        db: database.db,
        provider: {
          getMigrations: async () => ({
            '0001_a': { up: async (db) => void (await sql`create table probe_a (n integer)`.execute(db)) },
            '0002_b': {
              up: async (db) => {
                await sql`create table probe_b (n integer)`.execute(db);
                throw new Error('killed here');
              },
            },
          }),
        },
      });
      expect((await migrator.migrateToLatest()).error).toBeInstanceOf(Error);
      const tables = await sql<{ name: string }>`select name from sqlite_master where name like 'probe_%'`.execute(database.db);
      expect(tables.rows).toEqual([]);
      expect(await sql`select name from kysely_migration`.execute(database.db).then((r) => r.rows)).toEqual([]);
    } finally {
      await remove();
    }
  });
});
