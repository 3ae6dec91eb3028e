import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../test/helpers/server-process.js';

/** What the figures were measured on: absolute numbers only compare on the same machine. */
export interface Machine {
  readonly cpuModel: string;
  /** CPUs this process could use when the run started. */
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  /** The load generator and its version: wrk's or autocannon's. */
  readonly loadGenerator: string;
  /** The commit measured, with "+dirty" when the work tree had changes. */
  readonly commit: string | null;
  readonly loadAverageAtStart: number;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function packageVersion(name: string): string {
  try {
    const json = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof json.version === 'string' ? json.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `generator`: the one this run uses, with wrk's version when it is wrk. */
export function describeMachine(generator: { name: 'wrk' | 'autocannon'; wrkVersion: string | null }): Machine {
  const head = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src']);
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()}`,
    node: process.version,
    loadGenerator: generator.name === 'wrk' ? `wrk ${generator.wrkVersion ?? 'unknown'}` : `autocannon ${packageVersion('autocannon')}`,
    commit: head === null ? null : `${head}${dirty ? '+dirty' : ''}`,
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/** One line for the header of the printed table and of the README. */
export function machineLine(m: Machine): string {
  return `${m.cpuModel}, ${m.cores} CPUs, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, ${m.loadGenerator}`;
}
