import cluster, { type Worker } from 'node:cluster';
import { type Config, ConfigError } from './config.js';
import { holdClusterCounters } from './ratelimit/cluster.js';
import { closeOnSignals, startServer } from './server.js';
import { createServices } from './composition-root.js';
import type { Tracing } from './observability/tracing/tracing.js';
import { superviseMailChild } from './mail/supervisor.js';

const RESTART_DELAY_MS = 1000;
/** More crashes than this within the window means something is broken, not flaky: give up. */
const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;

/**
 * `rz-auth serve --workers N`: one primary process that forks N workers sharing the listening
 * socket (node:cluster). The primary prepares the database (migrations, first signing key) before
 * any worker starts, holds the shared rate-limit counters when there is no Redis, restarts workers
 * that crash, and on SIGTERM/SIGINT lets every worker finish its in-flight requests.
 */
export async function serveCluster(config: Config, tracing: Tracing): Promise<void> {
  // Each worker counts its own requests, and one address cannot be bound by every worker: until the
  // primary aggregates them, metrics are for single-process servers (docs/operations.md).
  if (config.metrics && config.workers > 1) {
    throw new ConfigError('METRICS_ADDR cannot be used with --workers (or WORKERS) above 1: run one process per instance, or unset METRICS_ADDR');
  }
  if (cluster.isWorker) {
    // A worker that cannot start (its port taken) must exit, for the primary to count the crash:
    // its channel to the primary would otherwise keep it alive, serving nothing.
    // MAIL_WORKER=process: the primary's one child sends for the whole group, no worker does.
    const mail = config.mail?.worker === 'process' ? { ...config.mail, worker: 'external' as const } : config.mail;
    const server = await startServer({ ...config, mail }, tracing).catch((error: unknown) => {
      cluster.worker?.disconnect();
      throw error;
    });
    closeOnSignals(server);
    return;
  }
  const services = await createServices(config);
  await services.close();
  if (!config.redisUrl) holdClusterCounters(config.rateLimits);

  let stopping = false;
  const log = (level: 'info' | 'error', msg: string, fields: Record<string, unknown>) => console.error(JSON.stringify({ level: level === 'error' ? 50 : 30, msg, ...fields }));
  const mailChild = config.mail?.worker === 'process' ? superviseMailChild({ count: null, stopTimeoutMs: config.shutdownTimeoutMs, log }) : null;
  let mailStopped: Promise<void> = Promise.resolve();
  const crashes: number[] = [];
  const fork = (): Worker => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) void mailStopped.then(() => process.exit(0));
      return;
    }
    const now = Date.now();
    crashes.push(now);
    while ((crashes[0] ?? now) < now - CRASH_WINDOW_MS) crashes.shift();
    console.error(JSON.stringify({ level: 50, msg: 'worker exited', pid: worker.process.pid, code, signal }));
    if (crashes.length > CRASH_LIMIT) {
      console.error(JSON.stringify({ level: 60, msg: `workers crashed ${crashes.length} times in a minute; giving up` }));
      process.exit(1);
    }
    setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    mailStopped = mailChild?.stop() ?? mailStopped;
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) void mailStopped.then(() => process.exit(0));
    for (const worker of workers) worker?.process.kill(signal);
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  for (let i = 0; i < config.workers; i++) fork();
}
