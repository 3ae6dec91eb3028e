import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, mkdir, open, rename, stat, unlink, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Deps } from './deps.js';
import { CliError } from './errors.js';

/** `$XDG_CONFIG_HOME/rz` (default `~/.config/rz`), `%APPDATA%\rz` on Windows (contract §13.8). */
export function configDir(deps: Pick<Deps, 'env' | 'platform' | 'homedir'>): string {
  if (deps.platform === 'win32') return join(deps.env.APPDATA ?? join(deps.homedir, 'AppData', 'Roaming'), 'rz');
  const xdg = deps.env.XDG_CONFIG_HOME;
  // XDG Base Directory: a relative value is invalid and ignored.
  return join(xdg !== undefined && xdg.startsWith('/') ? xdg : join(deps.homedir, '.config'), 'rz');
}

/**
 * Writes a file so that no reader ever sees it half-written or readable by others: a fresh temp
 * file created with O_CREAT|O_EXCL at 0600 (no umask window, no following a planted link), fsync,
 * then rename over the target, inside a 0700 directory.
 */
export async function writePrivateFile(dir: string, name: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const target = join(dir, name);
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  await rename(temp, target);
}

/** The file's text, or null when it does not exist. */
export async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Refuses a credentials file that group or others may read or write, as ssh does with private
 * keys: the token may already have leaked, and the user must decide, so the fix is printed, not
 * applied. Windows has no such bits (ACLs instead), so the check is POSIX only.
 */
export async function assertPrivate(path: string, platform: NodeJS.Platform): Promise<void> {
  if (platform === 'win32') return;
  const mode = (await stat(path)).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const octal = mode.toString(8).padStart(4, '0');
  throw new CliError(
    `Permissions ${octal} for '${path}' are too open: the token in it may be readable by other users.\n` +
    `Fix with: chmod 600 '${path}'`,
  );
}
