import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeliveryCount } from '../observability/metrics/queues.js';
import { addOutcomes } from './ipc.js';

/**
 * The CLI entry this code runs from, for the child's `rz-auth mail deliver`: the bundle itself
 * (dist/cli.js, where this module is inlined), or src/cli.ts under `npm run dev`, whose loader
 * the child inherits with the parent's node options (fork's execArgv).
 */
const HERE = fileURLToPath(import.meta.url);
const CLI = basename(HERE) === 'cli.js' ? HERE : fileURLToPath(new URL('../cli.ts', import.meta.url));

/** The first restart waits this long, each next one twice the last, up to {@link MAX_RESTART_DELAY_MS}. */
const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A child that ran this long was healthy: the next restart waits the first delay again. */
const HEALTHY_MS = 60_000;

export interface MailChildOptions {
  /** Where the child's outcomes are added (`rz_mail_deliveries_total`); null when metrics are off. */
  readonly count: DeliveryCount | null;
  /** How long the child may take to finish its round and close SMTP before it is killed. */
  readonly stopTimeoutMs: number;
  readonly log: (level: 'info' | 'error', message: string, fields: Record<string, unknown>) => void;
}

/** The supervised delivery child of a `serve` with MAIL_WORKER=process. */
export interface MailChild {
  /** The running child's process id (tests, the benchmark); undefined between a crash and its restart. */
  pid(): number | undefined;
  /** Stops the child (SIGTERM: it finishes its round and closes SMTP), killing it after the timeout; no restart after. */
  stop(): Promise<void>;
}

/**
 * Forks `rz-auth mail deliver` with the server's own environment and keeps one running: a child
 * that dies is started again after a delay that doubles with each quick death. The child never
 * outlives the server: it stops when the server stops it, and when its IPC channel closes
 * because the server died, even by SIGKILL (src/cli/mail-deliver.ts).
 */
export function superviseMailChild(options: MailChildOptions): MailChild {
  let child: ChildProcess | null = null;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;
  let delay = FIRST_RESTART_DELAY_MS;

  const start = (): void => {
    restart = null;
    const startedAt = Date.now();
    const current = fork(CLI, ['mail', 'deliver'], { env: process.env });
    child = current;
    if (options.count) {
      const count = options.count;
      current.on('message', (message) => addOutcomes(message, count));
    }
    current.on('error', (error) => options.log('error', 'mail delivery process', { err: error.message }));
    current.once('exit', (code, signal) => {
      if (child === current) child = null;
      if (stopping) return;
      delay = Date.now() - startedAt >= HEALTHY_MS ? FIRST_RESTART_DELAY_MS : delay;
      options.log('error', 'mail delivery process exited; restarting', { pid: current.pid, code, signal, restartInMs: delay });
      restart = setTimeout(start, delay);
      delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
    });
  };

  start();
  return {
    pid: () => child?.pid,
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const current = child;
      if (current === null || current.exitCode !== null || current.signalCode !== null) return;
      const exited = once(current, 'exit');
      current.kill('SIGTERM');
      const timer = setTimeout(() => current.kill('SIGKILL'), options.stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
