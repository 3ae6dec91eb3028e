#!/usr/bin/env node
import cluster from 'node:cluster';
import { OPERATOR_CONTEXT } from './audit/events.js';
import { COPY_USAGE, copyCommand } from './cli/copy.js';
import { auditQuery, DEFAULT_CLI_LIMIT, printAuditEvents } from './cli/audit.js';
import { readPassword } from './cli/password-input.js';
import { noArguments, onlyId, parseOnce, UsageError } from './cli/usage.js';
import { WEBHOOK_USAGE, webhookCommands } from './cli/webhooks.js';
import { CLIENTS_USAGE, clientCommands } from './cli/clients.js';
import { MAIL_USAGE, mailCommands } from './cli/mail.js';
import { deliverMail, MAIL_DELIVER_USAGE } from './cli/mail-deliver.js';
import { USERS_MFA_USAGE, usersMfaCommands } from './cli/users-mfa.js';
import { serveCluster } from './cluster.js';
import { type Config, ConfigError, loadConfig, parseWorkers } from './config.js';
import { describeDatabase, openDatabase, requireExisting } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { ProblemError } from './errors.js';
import { redactEcho, redactSecrets } from './lib/redact.js';
import { closeOnSignals, startServer } from './server.js';
import { loadTracing } from './observability/tracing/load.js';
import { NO_TRACING } from './observability/tracing/tracing.js';
import { createServices, type Services } from './composition-root.js';
import { VERSION } from './version.js';
import { MAX_LOOKUPS } from './webhooks/lookup-slots.js';

const USAGE = `rz-auth ${VERSION}: authentication and token service

Usage: rz-auth <command> [options]

Commands:
  serve [--workers N|auto]               start the HTTP server (PORT, HOST, DATABASE_URL, ...);
                                         --workers runs N processes on one port (node:cluster)
  migrate                                bring the database schema up to date and exit
  users create --email E --username U    create a user; the password is read from a prompt, or
                                         from the first line of stdin when it is not a terminal
  users list                             list users (id, email, username)
  users delete <id>                      delete a user with their apps, tokens and sessions
${USERS_MFA_USAGE}
  keys list                              list JWT signing keys
  keys rotate [--immediate]              new signing key; old keys keep verifying until their
                                         tokens expire, or stop at once with --immediate
  services create <name>                 a platform service's credential (rzs_...), for
                                         POST /api/introspect and GET /api/events; printed once
  services list                          list active service credentials (id, name, hint, created)
  services revoke <id>                   revoke a service credential on every instance
  audit list [--user ID] [--type T] [--since ISO] [--until ISO] [--limit N]
                                         security events, newest first, as JSON lines
                                         (default the last ${DEFAULT_CLI_LIMIT})
${WEBHOOK_USAGE}
${CLIENTS_USAGE}
${MAIL_USAGE}
${MAIL_DELIVER_USAGE}
${COPY_USAGE}
  help                                   show this text

Configuration comes from environment variables; see the README. Every command but serve and
migrate refuses a SQLite file that does not exist, and names the database it uses on stderr.`;

type Command = (args: string[], config: Config) => Promise<void>;
type Access = 'read' | 'write';

/**
 * Runs a command on the service's own rules, on the database DATABASE_URL names, which must exist.
 * A command that writes refuses to start while Redis (REDIS_URL) cannot be reached: a change it
 * committed could not be announced to the running instances. One that only reads (`access` 'read')
 * does not use Redis at all. Trouble in the background (an announcement that failed after all) is
 * printed, and the command then exits 1.
 */
async function withServices(config: Config, run: (services: Services) => Promise<void>, access: Access = 'write'): Promise<void> {
  let troubled = false;
  const onError = (error: unknown, context: string) => {
    troubled = true;
    console.error(`rz-auth: ${context}: ${shown(error)}`);
  };
  requireExisting(config.database);
  const reading = access === 'read';
  const services = await createServices(reading ? { ...config, redisUrl: null } : config, { requireFeed: !reading, onError });
  announceDatabase(config);
  try {
    await run(services);
  } finally {
    await services.close();
  }
  if (troubled) throw new Error('finished, with the errors above');
}

/** On stderr, so that stdout stays the command's answer: which database the command used. */
const announceDatabase = (config: Config) => console.error(`rz-auth: database ${describeDatabase(config.database)}`);

const commands: Record<string, Command> = {
  async serve(args, config) {
    const { values } = parseOnce({ args, options: { workers: { type: 'string' } } });
    const workers = values.workers === undefined ? config.workers : parseWorkers(values.workers, '--workers');
    // argon2 hashes on libuv's pool, and each pool thread that has ever hashed keeps a hash's memory
    // (bench/README.md, "Where rz-auth's memory goes"): the pool has `hashConcurrency` threads, and
    // the system resolver's lookup slots on top when webhooks may use it, since a lookup can hang,
    // and one thread for the rest: user tokens are signed and verified with WebCrypto on the pool,
    // and during a login flood a second step or a step-up would otherwise wait behind the hashes.
    const lookupSlots = config.webhooks.allowPrivate ? MAX_LOOKUPS : 0;
    process.env.UV_THREADPOOL_SIZE ??= String(config.passwords.hashConcurrency + lookupSlots + 1);
    // Each process that serves requests traces them: a cluster's workers, not its primary.
    const tracing = workers > 1 && cluster.isPrimary ? NO_TRACING : await loadTracing(process.env);
    if (workers > 1 || cluster.isWorker) await serveCluster({ ...config, workers }, tracing);
    else closeOnSignals(await startServer(config, tracing));
  },

  async migrate(args, config) {
    noArguments(args, 'migrate');
    const database = await openDatabase(config.database);
    announceDatabase(config);
    try {
      const { results } = await migrateToLatest(database.db);
      const applied = results?.filter((r) => r.status === 'Success').map((r) => r.migrationName) ?? [];
      console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    } finally {
      await database.close();
    }
  },

  async 'users create'(args, config) {
    const { values } = parseOnce({ args, options: { email: { type: 'string' }, username: { type: 'string' } } });
    if (!values.email || !values.username) throw new UsageError('users create needs --email and --username');
    const password = await readPassword(`Password for ${values.username}: `);
    await withServices(config, async (services) => {
      const user = await services.users.create({ email: values.email ?? '', username: values.username ?? '', password }, OPERATOR_CONTEXT);
      console.log(JSON.stringify({ id: user.id, email: user.email, username: user.username }));
    });
  },

  async 'users list'(args, config) {
    noArguments(args, 'users list');
    await withServices(config, async (services) => {
      for (const u of await services.users.list()) console.log(`${u.id}\t${u.email}\t${u.username}\t${u.createdAt}`);
    }, 'read');
  },

  async 'users delete'(args, config) {
    const id = onlyId(parseOnce({ args, allowPositionals: true }).positionals, 'users delete needs a user id');
    await withServices(config, async (services) => {
      if (!(await services.users.delete(id))) throw new UsageError(`no user with id ${id}`);
      console.log(`deleted ${id}`);
    });
  },

  async 'keys list'(args, config) {
    noArguments(args, 'keys list');
    await withServices(config, async (services) => {
      const signer = services.keys.signingKey().kid;
      for (const kid of services.keys.kids()) console.log(`${kid}\t${kid === signer ? 'signing' : 'verify-only'}`);
    }, 'read');
  },

  async 'keys rotate'(args, config) {
    const { values } = parseOnce({ args, options: { immediate: { type: 'boolean', default: false } } });
    await withServices(config, async (services) => {
      const kid = await services.keys.rotate({ immediate: values.immediate });
      console.log(values.immediate ? `new signing key ${kid}; all older keys dropped` : `new signing key ${kid}`);
    });
  },

  async 'services create'(args, config) {
    const { positionals } = parseOnce({ args, allowPositionals: true });
    if (positionals.length !== 1) throw new UsageError('services create needs one name, e.g. services create scoreboard');
    await withServices(config, async (services) => {
      const { token, credential } = await services.serviceCredentials.create(positionals[0] ?? '');
      console.log(JSON.stringify({ id: credential.id, name: credential.name, token, created_at: credential.createdAt }));
    });
  },

  async 'services list'(args, config) {
    noArguments(args, 'services list');
    await withServices(config, async (services) => {
      for (const c of await services.serviceCredentials.list()) console.log(`${c.id}\t${c.name}\t${c.hint}\t${c.createdAt}`);
    }, 'read');
  },

  async 'services revoke'(args, config) {
    const id = onlyId(parseOnce({ args, allowPositionals: true }).positionals, 'services revoke needs a credential id');
    await withServices(config, async (services) => {
      if (!(await services.serviceCredentials.revoke(id))) throw new UsageError(`no active service credential with id ${id}`);
      console.log(`revoked ${id}`);
    });
  },

  async 'audit list'(args, config) {
    const query = auditQuery(args);
    await withServices(config, (services) => printAuditEvents(services.audit, query, (line) => console.log(line)), 'read');
  },

  ...webhookCommands(withServices),
  ...clientCommands(withServices),
  ...mailCommands(withServices),
  'mail deliver': deliverMail,
  ...usersMfaCommands(withServices),
  copy: copyCommand,
};

/**
 * An error as printed to the operator, each line redacted as the log is: a message may quote a
 * value that was typed (`--workers rzs_…` is refused naming it), and it must not be echoed.
 */
const shown = (error: unknown): string => describe(error).split('\n').map(redactSecrets).join('\n');

function describe(error: unknown): string {
  if (error instanceof ProblemError) {
    const fields = error.errors?.map((e) => `  ${e.field}: ${e.message}`).join('\n');
    return fields ? `${error.detail}\n${fields}` : error.detail;
  }
  if (!(error instanceof Error)) return String(error);
  return error.cause === undefined ? error.message : `${error.message}: ${describe(error.cause)}`;
}

async function main(argv: string[]): Promise<number> {
  const [first = 'help', second = ''] = argv;
  if (first === 'help' || first === '--help' || first === '-h') {
    console.log(USAGE);
    return 0;
  }
  if (first === '--version') {
    console.log(VERSION);
    return 0;
  }
  const twoWord = `${first} ${second}`;
  const name = twoWord in commands ? twoWord : first in commands ? first : undefined;
  if (!name) {
    // What was typed may hold a token pasted in the wrong place, or terminal escapes.
    console.error(`rz-auth: unknown command "${redactEcho(argv.join(' '), 200)}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const config = loadConfig(process.env);
    await commands[name]?.(argv.slice(name.split(' ').length), config);
    return 0;
  } catch (error) {
    const prefix = error instanceof ConfigError ? 'configuration error: ' : '';
    console.error(`rz-auth: ${prefix}${shown(error)}`);
    return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
  }
}

void main(process.argv.slice(2)).then((code) => {
  // `serve` keeps running; every other command exits with its status.
  if (code !== 0 || !['serve'].includes(process.argv[2] ?? '')) process.exitCode = code;
});
