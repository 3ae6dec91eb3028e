import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/*
 * The two things the targets need to know about a server process and Node cannot say about another
 * process: its CPU time (the login target is about every core busy; the harness waits for a server
 * to go idle between slices) and its peak resident memory (the RSS target). Linux only: elsewhere
 * both read null and the table says n/a rather than a made-up figure.
 */

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time used by a process, every thread, in seconds. */
export function processCpuSeconds(pid: number): number | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name may contain spaces and parentheses: fields are counted after its closing ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * Resets the kernel's peak-RSS mark (VmHWM), so the next {@link peakRssMb} covers only what follows.
 * Where that is not permitted the mark keeps counting from the start: still an upper bound.
 */
export function resetPeakRss(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // See above.
  }
}

/** Peak resident memory since start or the last {@link resetPeakRss}, in MB. */
export function peakRssMb(pid: number): number | null {
  const match = /^VmHWM:\s+(\d+) kB/m.exec(read(`/proc/${pid}/status`) ?? '');
  return match ? Number(match[1]) / 1024 : null;
}
