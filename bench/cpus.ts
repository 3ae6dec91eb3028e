import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';

/**
 * Which CPUs each party may use. The load generator gets CPU 0; a server under test gets the other
 * CPUs for the hot-path scenarios, so the two never compete for a core; for the password scenarios
 * rz-auth gets every CPU, because argon2id is meant to keep every core busy. Needs `taskset` (util-linux)
 * and at least two CPUs; otherwise nothing is pinned and the report says so.
 */
export interface CpuLayout {
  /** A taskset CPU list, or null when pinning is off. */
  readonly loadGenerator: string | null;
  readonly hotPath: string | null;
  readonly all: string | null;
  readonly description: string;
}

export type CpuSet = 'hot' | 'all';

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Decides the layout from the CPUs this process may use; call before pinning anything. */
export function planCpus(): CpuLayout {
  const cores = availableParallelism();
  if (cores < 2 || !hasTaskset()) {
    const why = cores < 2 ? 'a single CPU' : 'no taskset';
    return { loadGenerator: null, hotPath: null, all: null, description: `not pinned (${why}): load generator and servers share the CPUs` };
  }
  const last = cores - 1;
  const hotPath = last === 1 ? '1' : `1-${last}`;
  return {
    loadGenerator: '0',
    hotPath,
    all: `0-${last}`,
    description: `load generator on CPU 0; servers on CPU ${hotPath} for hot-path scenarios, on CPUs 0-${last} for password scenarios`,
  };
}

/** Moves every thread of a running process onto `cpus` (threads it starts later inherit it). */
export function pin(pid: number, cpus: string | null): void {
  if (cpus === null) return;
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

export function cpusFor(layout: CpuLayout, set: CpuSet): string | null {
  return set === 'hot' ? layout.hotPath : layout.all;
}

/** The nice value of `--high-priority`: CFS then gives it about ten times the CPU share of a nice-0 process. */
const HIGH_PRIORITY = -10;

/**
 * Raises every thread of a process to {@link HIGH_PRIORITY} (on Linux nice is per thread; threads
 * started later inherit it from their creator). False when not permitted (needs CAP_SYS_NICE).
 */
export function raisePriority(pid: number): boolean {
  let threads: number[];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  try {
    for (const tid of threads) setPriority(tid, HIGH_PRIORITY);
    return true;
  } catch {
    return false;
  }
}
