import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, Kysely, PostgresDialect, SqliteAdapter, type SqliteDatabase, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import { ConfigError } from '../lib/env-vars.js';
import type { DialectName } from './dialect.js';
import type { Tables } from './tables.js';

/** An open store connection plus what the rest of the service needs to know about it. */
export interface Database {
  readonly db: Kysely<Tables>;
  readonly dialect: DialectName;
  /**
   * SQLite only: a number that changes whenever another connection (another process, a CLI
   * command, another worker) commits to the file. Reading it costs no I/O.
   */
  readonly dataVersion: (() => number) | null;
  close(): Promise<void>;
}

/**
 * better-sqlite3 12 wraps its objects in node::ObjectWrap, which aborts the process on Node 24.19+
 * when a statement is garbage-collected (nodejs/node#65446). 13 moved to Node-API and is fine there,
 * but declares Node >= 22 and crashes on Node 20. Same API, so each runtime loads the one that works
 * on it; `better-sqlite3-napi` is an npm alias of better-sqlite3@13.
 */
export function loadSqlite(): typeof BetterSqlite3 {
  const major = Number(process.versions.node.split('.')[0]);
  return createRequire(import.meta.url)(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3') as typeof BetterSqlite3;
}

/**
 * Opens (and for SQLite, creates) the database named by the configuration. The PostgreSQL driver
 * is loaded only when it is used, so the embedded default does not carry it in memory.
 */
export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  return config.kind === 'sqlite' ? openSqlite(config) : openPostgres(config.url, config.poolSize);
}

/**
 * The database as shown to the operator: the SQLite file's absolute path, or the PostgreSQL URL
 * without its password.
 */
export function describeDatabase(config: DatabaseConfig): string {
  if (config.kind === 'sqlite') return `sqlite:${config.path === ':memory:' ? config.path : resolve(config.path)}`;
  const url = new URL(config.url);
  url.password = '';
  return url.toString();
}

/**
 * Refuses a SQLite file that does not exist. Only `serve` and `migrate` create the database: a CLI
 * command run with the wrong DATABASE_URL (or none, from another folder) would otherwise work on a
 * new, empty one and report success.
 */
export function requireExisting(config: DatabaseConfig, name = 'DATABASE_URL'): void {
  if (config.kind !== 'sqlite' || config.path === ':memory:' || existsSync(config.path)) return;
  throw new ConfigError(`${name}: no database at ${resolve(config.path)}; set ${name} to the service's database (sqlite:<file> or postgres://...), or create one with "rz-auth migrate"`);
}

/**
 * Kysely's SQLite with two changes, both for a file several processes write (workers, the CLI):
 * - Transactions begin IMMEDIATE, taking the write lock first and waiting for it (busy_timeout). A
 *   deferred one that reads and then writes fails at once, without waiting, with SQLITE_BUSY_SNAPSHOT
 *   when another process wrote in between.
 * - Migrations run in a transaction, as SQLite's DDL allows: a process killed in the middle of one
 *   leaves the file as it was, not with tables the migration table does not know of.
 */
class WritingSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.settings);
  }

  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * The file holds the signing keys and the webhook secrets: a new one is created readable by the
 * service's user only (0600, its folder 0700) before SQLite opens it, whatever the umask, and
 * SQLite gives its -wal and -shm files the database's own mode. An existing file keeps its mode.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** better-sqlite3 opened on `path` in WAL mode; a file it cannot use is a configuration error naming it. */
function openSqliteFile(path: string): BetterSqlite3.Database {
  try {
    if (path !== ':memory:') createPrivately(path);
    const sqlite = new (loadSqlite())(path);
    // WAL: readers never block the writer, and a killed process loses no committed transaction.
    sqlite.pragma('journal_mode = WAL');
    return sqlite;
  } catch (error) {
    throw new ConfigError(`DATABASE_URL: cannot use ${path} as the SQLite database: ${(error as Error).message}`);
  }
}

function openSqlite({ path, synchronous, cacheKiB }: Extract<DatabaseConfig, { kind: 'sqlite' }>): Database {
  const sqlite = openSqliteFile(path);
  sqlite.pragma(`synchronous = ${synchronous}`);
  sqlite.pragma('foreign_keys = ON');
  // Several processes (workers, the CLI) may write to one file: wait for the lock, don't fail.
  sqlite.pragma('busy_timeout = 5000');
  // A negative cache_size is a size in KiB. The cache fills as the file grows and is never given back.
  sqlite.pragma(`cache_size = -${cacheKiB}`);
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  const db = new Kysely<Tables>({ dialect: new WritingSqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    dataVersion: () => dataVersion.get() as number,
    // Kysely's destroy closes the better-sqlite3 handle (and checkpoints the WAL).
    close: () => db.destroy(),
  };
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query afresh; preparing costs about as much as running a small statement.
 * Queries are parameterised, so the distinct SQL texts are few: keep their prepared statements.
 * (better-sqlite3 runs a statement to completion before returning, so reuse never overlaps; the
 * service never streams results, which would keep one open.)
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (statements.size < STATEMENT_CACHE_SIZE) statements.set(sql, statement);
      }
      return statement;
    },
  };
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max });
  // A pool error on an idle client (server restart) must not crash the process; queries retry.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', dataVersion: null, close: () => db.destroy() };
}
