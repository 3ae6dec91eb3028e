import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/composition-root.js';
import { freshPostgresDatabase } from './services.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly config: Config;
  readonly dir: string;
  /** Every log line written so far, raw. */
  readonly logs: string[];
  /** {@link logs} once the access lines of the current turn are written (they go out at its end). */
  settledLogs(): Promise<string[]>;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

const postgresByDir = new Map<string, string>();

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'rz-auth-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The real app on a real SQLite file in a temp directory, driven in-process with inject().
 * `env` overrides configuration exactly as environment variables would (rate limits default off).
 */
export async function startTestApp(options: { env?: Record<string, string>; clock?: Clock; dir?: string } = {}): Promise<TestApp> {
  const temp = options.dir ? { dir: options.dir, remove: () => {} } : tempDir();
  // TEST_DATABASE=postgres runs the same tests on a fresh PostgreSQL database per app; a second app
  // started on the same `dir` shares the first one's database, as it would share the SQLite file.
  const onPostgres = process.env.TEST_DATABASE === 'postgres';
  const postgres = onPostgres && !options.dir ? await freshPostgresDatabase() : null;
  if (postgres) postgresByDir.set(temp.dir, postgres.url);
  const remove = async () => {
    temp.remove();
    await postgres?.drop();
  };
  let config: Config;
  let services: Services;
  try {
    const database = (onPostgres && postgresByDir.get(temp.dir)) || `sqlite:${join(temp.dir, 'rz.db')}`;
    // Rate limits are off unless a test turns them on: most tests sign up many users from one address.
    config = loadConfig({ DATABASE_URL: database, LOG_LEVEL: 'info', RATE_LIMITS: 'off', MAIL_WORKER: 'inline', ...options.env });
    services = await createServices(config, options.clock ? { clock: options.clock } : {});
    // Tests run the sweeps and webhook and mail deliveries themselves (runOnce()), under their clock;
    // MAIL_WORKER=inline keeps mail delivery in this process for that (the server's default forks it).
    services.background.start({ except: ['maintenance', 'webhookDelivery', 'mailDelivery'] });
  } catch (error) {
    await remove();
    throw error;
  }
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString('utf8'));
      callback();
    },
  });
  const app = await createApp(services, { logStream });
  return {
    app,
    services,
    config,
    dir: temp.dir,
    logs,
    settledLogs: () => new Promise((resolve) => setImmediate(() => resolve(logs))),
    inject: (request) => app.inject(request),
    async close() {
      await app.close();
      await services.close();
      await remove();
    },
  };
}
