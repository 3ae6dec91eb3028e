import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { Answer } from '../../types/api.js';
import { tempDir } from './app.js';
import { scaleOutEnv } from './scale-out.js';
import { runCli, type ServerProcess, spawnServer } from './server-process.js';
import { postgresAvailable, redisAvailable } from './services.js';

/** Webhook end-to-end tests: a real receiver and the databases the server processes run on. */

/** One request a receiver got: lower-case header names, the body exactly as sent. */
export interface Received {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly at: number;
}

/** An endpoint as POST /api/webhooks and `rz-auth webhooks add` show it, with its secret. */
export type EndpointJson = Answer<'createWebhook', 201>;

/** A delivery as the listing shows it. */
export type DeliveryJson = Answer<'listWebhookDeliveries'>['deliveries'][number];

/** The body of a delivery (docs: webhooks design, "Sending"). */
export interface DeliveryBody {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Record<string, unknown>;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>`: endpoints add a path to tell them apart. */
  readonly url: string;
  /** Requests answered 204, in arrival order. */
  readonly answered: Received[];
  /** Requests that arrived while holding: never answered. */
  readonly held: Received[];
  /** `hold`: keep each request open without answering (deliveries stay in flight); `answer`: 204. */
  setMode(mode: 'hold' | 'answer'): void;
  /** Polls until `done()` holds; fails naming `what` after `timeoutMs`. */
  waitFor(what: string, done: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 (the server needs WEBHOOK_ALLOW_PRIVATE=true to send to it). */
export async function startReceiver(mode: 'hold' | 'answer' = 'answer'): Promise<Receiver> {
  let current = mode;
  const answered: Received[] = [];
  const held: Received[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      const received = { path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      if (current === 'hold') {
        held.push(received);
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      answered.push(received);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    held,
    setMode(next) {
      current = next;
      // A held request is never answered: its sender has given up or died.
      if (next === 'answer') for (const res of open) res.destroy();
    },
    async waitFor(what, done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`receiver: ${what} not within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/**
 * Verifies a request's signature with the standardwebhooks package (an implementation of the
 * specification independent of ours) and returns the parsed body.
 */
export function verified(secret: string, received: Received): DeliveryBody {
  const headers = {
    'webhook-id': received.headers['webhook-id'] ?? '',
    'webhook-timestamp': received.headers['webhook-timestamp'] ?? '',
    'webhook-signature': received.headers['webhook-signature'] ?? '',
  };
  return new Webhook(secret).verify(received.body, headers) as DeliveryBody;
}

/** The databases webhook e2e tests run on: SQLite always, PostgreSQL too when TEST_DATABASE=postgres. */
export async function webhookDatabases(): Promise<Array<'sqlite' | 'postgres'>> {
  if (process.env.TEST_DATABASE !== 'postgres') return ['sqlite'];
  // Several processes on PostgreSQL share Redis as well (scaleOutEnv); without both, skip with a warning.
  return (await postgresAvailable()) && (await redisAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

/**
 * The environment of the server processes and CLI runs of the enclosing describe block: a fresh
 * database of the given kind, rate limits off, webhooks allowed to reach the loopback receiver.
 * Filled before the block's tests run.
 */
export function webhookEnv(database: 'sqlite' | 'postgres', extra: Record<string, string> = {}): Record<string, string> {
  const env = { WEBHOOK_ALLOW_PRIVATE: 'true', ...extra };
  if (database === 'postgres') return scaleOutEnv(env);
  const temp = tempDir();
  afterAll(() => temp.remove());
  return { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, RATE_LIMITS: 'off', ...env };
}

export interface WebhookProcesses {
  /** The environment of the block's server processes and CLI runs. */
  readonly env: Record<string, string>;
  /** The block's receiver, started before its tests. */
  receiver(): Receiver;
  /** Starts `rz-auth serve` on the block's database; SIGKILLed after each test. */
  start(): Promise<ServerProcess>;
}

/** For the enclosing describe block: {@link webhookEnv}, a receiver in `mode`, and server processes. */
export function webhookProcesses(database: 'sqlite' | 'postgres', mode: 'hold' | 'answer', extra: Record<string, string> = {}): WebhookProcesses {
  const env = webhookEnv(database, extra);
  let receiver: Receiver | undefined;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    receiver = await startReceiver(mode);
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop('SIGKILL');
  });
  afterAll(() => receiver?.close());
  return {
    env,
    receiver() {
      if (!receiver) throw new Error('the receiver starts before the tests');
      return receiver;
    },
    async start() {
      const server = await spawnServer(env);
      servers.push(server);
      return server;
    },
  };
}

/** Runs a CLI command that must succeed and prints JSON lines; returns them parsed. */
export async function cliJsonLines(args: readonly string[], env: Record<string, string>): Promise<Record<string, unknown>[]> {
  const result = await runCli(args, env);
  expect(result.code, `rz-auth ${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout.trim() === '' ? [] : result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}
