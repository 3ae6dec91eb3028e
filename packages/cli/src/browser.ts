import { spawn } from 'node:child_process';
import type { Deps } from './deps.js';

/**
 * Whether a browser can be opened here: not when asked not to, not over SSH (the browser would
 * open on the far machine, or nowhere), not in CI, and not on Linux without a display.
 */
export function canOpenBrowser(deps: Pick<Deps, 'env' | 'platform'>, noBrowser: boolean): boolean {
  const { env, platform } = deps;
  if (noBrowser || nonEmpty(env.SSH_CONNECTION) || nonEmpty(env.CI)) return false;
  if (platform === 'linux' && !nonEmpty(env.DISPLAY) && !nonEmpty(env.WAYLAND_DISPLAY)) return false;
  return true;
}

const nonEmpty = (value: string | undefined): boolean => value !== undefined && value !== '';

/**
 * The OS opener, detached and unawaited: a missing opener or browser only means the user opens
 * the printed URL by hand. The URL is one argument, never passed through a shell.
 */
export function openWithOs(url: string, platform: NodeJS.Platform = process.platform): void {
  const [command, args] = platform === 'darwin' ? ['open', [url]]
    : platform === 'win32' ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
      : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // The URL is already on the screen.
  }
}
