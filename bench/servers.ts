import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { builtCli, builtIsCurrent, freePort, ROOT, type ServerProcess, spawnNode } from '../test/helpers/server-process.js';
import { rzAuthEnv, type Store } from './env.js';
import type { Credentials } from './setup.js';

/*
 * The processes the scenarios load. Each is started plainly, `node <file>`, on the Node that runs
 * the harness (process.execPath), so every ratio compares two servers on the same runtime with the
 * same settings, and a ratio measures the work one does and the other does not.
 */

export type ServerName = 'ceiling' | 'rz-auth' | 'rz-auth-metrics' | 'rz-auth-tracing' | 'rz-auth-mail' | 'resource-server' | 'resource-baseline';

/** What a server is started with: the store, and once set up, rz-auth's address and the credentials. */
export interface StartContext {
  readonly store: Store;
  readonly rzAuth?: { readonly url: string; readonly credentials: Credentials };
}

/**
 * Servers that need rz-auth running and the credentials made: they start after the setup. The
 * rz-auth with metrics shares rz-auth's store, so it starts once rz-auth has migrated it.
 */
export const NEEDS_CREDENTIALS: ReadonlySet<ServerName> = new Set(['resource-server', 'rz-auth-metrics', 'rz-auth-mail']);

const ceilingReady = async (url: string) =>
  (await fetch(`${url}/api/me`, { headers: { authorization: 'Bearer ready' }, signal: AbortSignal.timeout(1000) })).ok;

/** The example service is ready once its event stream is up: before, it caches nothing. */
const streamUp = async (url: string) =>
  ((await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).json()) as { events?: unknown }).events === 'up';

function resourceServer(ctx: StartContext): Promise<ServerProcess> {
  if (!ctx.rzAuth) throw new Error('the resource server needs rz-auth and a service credential');
  const env = { RZ_AUTH_URL: ctx.rzAuth.url, RZ_SERVICE_TOKEN: ctx.rzAuth.credentials.serviceToken };
  return spawnNode([join(ROOT, 'examples', 'resource-server', 'server.mjs')], env, { ready: streamUp, discardStdout: true });
}

/** The metrics listener (METRICS_ADDR) of each server started with one. */
const metricsUrls = new WeakMap<ServerProcess, string>();

/** The address of `server`'s metrics listener; throws for a server started without one. */
export function metricsUrlOf(server: ServerProcess): string {
  const url = metricsUrls.get(server);
  if (url === undefined) throw new Error('this server has no metrics listener');
  return url;
}

/** rz-auth with METRICS_ADDR on a free loopback port (no token: loopback needs none), on the same store. */
async function rzAuthWithMetrics({ store }: StartContext): Promise<ServerProcess> {
  const port = await freePort();
  const server = await spawnNode([builtCli(), 'serve'], { ...rzAuthEnv(store), METRICS_ADDR: `127.0.0.1:${port}` }, { discardStdout: true, readyTimeoutMs: 30_000 });
  metricsUrls.set(server, `http://127.0.0.1:${port}`);
  return server;
}

/**
 * rz-auth with tracing on as configured in production: the default sampler (parentbased, 1 % of
 * the traces it starts) and OTLP/HTTP export, to a sink that discards it (bench/otlp-sink.ts),
 * started with it and stopped with it. It shares the store of `rz-auth`, so the same credentials work.
 */
async function tracedRzAuth({ store }: StartContext): Promise<ServerProcess> {
  const sink = await spawnNode(['--import', 'tsx', join(ROOT, 'bench', 'otlp-sink.ts')], {}, { discardStdout: true, readyTimeoutMs: 30_000 });
  try {
    const server = await spawnNode([builtCli(), 'serve'], { ...rzAuthEnv(store), OTEL_EXPORTER_OTLP_ENDPOINT: sink.url }, { discardStdout: true, readyTimeoutMs: 30_000 });
    return { ...server, stop: async (signal) => ((await Promise.all([server.stop(signal), sink.stop(signal)]))[0]) };
  } catch (error) {
    await sink.stop('SIGKILL');
    throw error;
  }
}

/** The relay (bench/smtp-sink.ts) of each server started with mail on: its HTTP address answers how many messages it accepted. */
const mailSinks = new WeakMap<ServerProcess, string>();

/** The address of `server`'s relay count; throws for a server started without mail. */
export function mailSinkOf(server: ServerProcess): string {
  const url = mailSinks.get(server);
  if (url === undefined) throw new Error('this server has no mail relay');
  return url;
}

/**
 * rz-auth with mail on (SMTP_URL), on the same store, sending to a loopback relay that accepts and
 * discards every message (bench/smtp-sink.ts), started with it and stopped with it.
 */
async function rzAuthWithMail({ store }: StartContext): Promise<ServerProcess> {
  const smtpPort = await freePort();
  const sink = await spawnNode(['--import', 'tsx', join(ROOT, 'bench', 'smtp-sink.ts')], { SMTP_PORT: String(smtpPort) }, { ready: async (url) => (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok, discardStdout: true, readyTimeoutMs: 30_000 });
  try {
    const mail = { SMTP_URL: `smtp://127.0.0.1:${smtpPort}?tls=off`, MAIL_FROM: 'no-reply@bench.example.com', PUBLIC_URL: 'https://bench.example.com' };
    const server = await spawnNode([builtCli(), 'serve'], { ...rzAuthEnv(store), ...mail }, { discardStdout: true, readyTimeoutMs: 30_000 });
    const both: ServerProcess = { ...server, stop: async (signal) => (await Promise.all([server.stop(signal), sink.stop(signal)]))[0] };
    mailSinks.set(both, sink.url);
    return both;
  } catch (error) {
    await sink.stop('SIGKILL');
    throw error;
  }
}

/** How each server starts. Stdout (rz-auth's request log, written as in production) is discarded, not kept. */
const START: Readonly<Record<ServerName, (ctx: StartContext) => Promise<ServerProcess>>> = {
  // 30 s to be ready, as rz-auth: tsx compiles the file first, which on a busy machine took over 20 s.
  ceiling: () => spawnNode(['--import', 'tsx', join(ROOT, 'bench', 'ceiling-server.ts')], {}, { ready: ceilingReady, discardStdout: true, readyTimeoutMs: 30_000 }),
  'rz-auth': ({ store }) => spawnNode([builtCli(), 'serve'], rzAuthEnv(store), { discardStdout: true, readyTimeoutMs: 30_000 }),
  'rz-auth-metrics': rzAuthWithMetrics,
  'rz-auth-tracing': tracedRzAuth,
  'rz-auth-mail': rzAuthWithMail,
  'resource-server': resourceServer,
  'resource-baseline': () => spawnNode(['--import', 'tsx', join(ROOT, 'bench', 'resource-baseline.ts')], {}, { discardStdout: true }),
};

/** Builds dist/ when it is missing or older than src/, so the benchmark never measures stale code. */
export function ensureBuilt(): void {
  if (builtIsCurrent()) return;
  console.log('dist/ is missing or older than src/: npm run build');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

export type Servers = ReadonlyMap<ServerName, ServerProcess>;

/** True once the process has exited: a server that dies mid-run fails the run. */
export const hasExited = (server: ServerProcess): boolean => server.child.exitCode !== null || server.child.signalCode !== null;

/** Stops a server gracefully, or kills it after 5 s. */
export async function stopServer(server: ServerProcess): Promise<void> {
  const timer = setTimeout(() => void server.stop('SIGKILL'), 5000);
  await server.stop();
  clearTimeout(timer);
}

/** Starts the named servers side by side into `started`, which the caller stops whatever happens; throws if one fails. */
export async function startServers(names: readonly ServerName[], ctx: StartContext, started: Map<ServerName, ServerProcess>): Promise<void> {
  const outcomes = await Promise.allSettled(
    names.map(async (name) => {
      const server = await START[name](ctx).catch((error: unknown) => {
        throw new Error(`${name} did not start: ${error instanceof Error ? error.message : String(error)}`);
      });
      started.set(name, server);
    }),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}
