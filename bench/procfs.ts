import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/*
 * What the benchmark reads about processes, from Linux's /proc. Elsewhere every reader returns
 * null and the report says "n/a" rather than a made-up figure.
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

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(read(`/proc/${pid}/status`) ?? '');
  return match ? Number(match[1]) : null;
}

/** Resident memory now, in KiB. */
export const rssKiB = (pid: number): number | null => statusKiB(pid, 'VmRSS');

/** Peak resident memory since start or since the last {@link resetPeakRss}, in KiB. */
export const peakRssKiB = (pid: number): number | null => statusKiB(pid, 'VmHWM');

/** Resets the kernel's peak-RSS mark (Linux 4.0+, our own child only); false if not possible. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** CPU time used by a process (every thread), in seconds. */
export function processCpuSeconds(pid: number): number | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name may contain spaces and parentheses; fields are counted after its closing ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU time every core of the machine spent busy (anything but idle and iowait), in seconds. */
export function machineBusySeconds(): number | null {
  const line = read('/proc/stat')?.split('\n')[0];
  if (!line?.startsWith('cpu ')) return null;
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}
