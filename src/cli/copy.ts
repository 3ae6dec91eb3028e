import { ConfigError, type DatabaseConfig, parseDatabase } from '../config.js';
import { copyTables, firstNonEmpty, summarise, type TableSummary } from '../db/copy.js';
import { type Database, describeDatabase, openDatabase, requireExisting } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { parseOnce, UsageError } from './usage.js';

export const COPY_USAGE = `  copy --from URL --to URL               copy a whole deployment (every table, signing keys
                                         included) into an empty database, then compare each
                                         table's rows and checksum (docs/deployment.md)`;

/** A database URL given as an option, read as DATABASE_URL is; errors name the option. */
function databaseOption(value: string | undefined, option: string): DatabaseConfig {
  if (value === undefined) throw new UsageError('copy needs --from and --to, e.g. copy --from sqlite:./data/rz-auth.db --to postgres://user:password@host/rz');
  try {
    return parseDatabase({ DATABASE_URL: value });
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError(error.message.replaceAll('DATABASE_URL', option));
    throw error;
  }
}

/** Tables whose count or checksum differ between the source and the copy, described. */
function differences(expected: readonly TableSummary[], actual: readonly TableSummary[]): string[] {
  return expected.flatMap((e, i) => {
    const a = actual[i];
    if (a?.rows === e.rows && a.digest === e.digest) return [];
    return [`${e.table}: ${e.rows} rows in --from, ${a?.rows ?? 0} in --to${a?.rows === e.rows ? ', checksums differ' : ''}`];
  });
}

async function withDatabase<T>(config: DatabaseConfig, run: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(config);
  try {
    return await run(database);
  } finally {
    await database.close();
  }
}

/**
 * `rz-auth copy --from URL --to URL`: every table into an empty database (a non-empty one is refused:
 * nothing is merged or overwritten), then a verification that reads both again. A service still
 * writing to the source makes the verification fail, so the operator stops it first.
 */
export async function copyCommand(args: string[]): Promise<void> {
  const { values } = parseOnce({ args, options: { from: { type: 'string' }, to: { type: 'string' } } });
  const from = databaseOption(values.from, '--from');
  const to = databaseOption(values.to, '--to');
  requireExisting(from, '--from');
  if (describeDatabase(from) === describeDatabase(to)) throw new UsageError('--from and --to name the same database');
  await withDatabase(from, (source) =>
    withDatabase(to, async (target) => {
      console.error(`rz-auth: copying ${describeDatabase(from)} to ${describeDatabase(to)}`);
      await migrateToLatest(source.db);
      await migrateToLatest(target.db);
      const held = await firstNonEmpty(target.db);
      if (held) throw new UsageError(`--to already holds data (${held.rows} rows in ${held.table}): copy only into an empty database`);
      await copyTables(source.db, target.db, (s) => console.log(`copied\t${s.table}\t${s.rows}`));
      const expected = await summarise(source.db);
      const wrong = differences(expected, await summarise(target.db));
      if (wrong.length > 0) {
        throw new Error(`verification failed: ${wrong.join('; ')}. Was the service still writing to --from? Stop it, empty --to and copy again`);
      }
      const rows = expected.reduce((n, s) => n + s.rows, 0);
      console.log(`verified\t${expected.length} tables\t${rows} rows\tcounts and checksums equal`);
    }),
  );
}
