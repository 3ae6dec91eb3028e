import { readdirSync, readFileSync } from 'node:fs';

/*
 * Other processes as Linux's /proc shows them: which children a server forked and whether one is
 * still running, for the tests of the mail delivery child and the benchmark's CPU figures.
 */

const read = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
};

/** A process's state letter and parent, from /proc/<pid>/stat (the name may hold spaces and parentheses). */
function statOf(pid: number): { state: string; ppid: number } | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, ppid: Number(ppid) };
}

/** The command line a process was started with, arguments joined by spaces. */
export const commandLine = (pid: number): string => (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim();

/** Running, not a zombie waiting for a parent to reap it (an orphan's new parent may never do). */
export function isRunning(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/** The running processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => statOf(child)?.ppid === pid && isRunning(child));
}

/** The one child of `pid` running `rz-auth mail deliver`, waiting up to `timeoutMs` for it; null if none appears. */
export async function deliveryChildOf(pid: number, timeoutMs = 10_000): Promise<number | null> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const found = childrenOf(pid).find((child) => commandLine(child).includes('mail deliver'));
    if (found !== undefined) return found;
  }
  return null;
}

/** Resolves true once `pid` no longer runs, false if it still does after `timeoutMs`. */
export async function gone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (!isRunning(pid)) return true;
  }
  return !isRunning(pid);
}
