import type { Keychain } from './keychain.js';

/**
 * Everything the commands take from the outside world, passed in so tests run them in process
 * with a stub server, a test clock and a keychain double (DEVELOPERS.md: time is a dependency).
 */
export interface Deps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly homedir: string;
  readonly hostname: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The whole of stdin as text; tokens are read from here only. */
  readonly readStdin: () => Promise<string>;
  readonly fetch: typeof fetch;
  /** The OS keychain, or null when the binding is missing or fails to load. */
  readonly loadKeychain: () => Promise<Keychain | null>;
  readonly openBrowser: (url: string) => void;
  readonly now: () => number;
  /** Waits, rejecting with the signal's reason when it aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
}
