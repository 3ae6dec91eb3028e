import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/cli.js';
import type { Deps } from '../src/deps.js';
import type { Keychain } from '../src/keychain.js';

/** A keychain double: a map, or one that fails like a machine without a Secret Service. */
export class MemoryKeychain implements Keychain {
  readonly items = new Map<string, string>();
  constructor(public broken = false) {}
  private check(): void {
    if (this.broken) throw new Error("Couldn't access platform storage: AccessDenied");
  }
  async get(service: string, account: string) { this.check(); return this.items.get(`${service}/${account}`) ?? null; }
  async set(service: string, account: string, secret: string) { this.check(); this.items.set(`${service}/${account}`, secret); }
  async delete(service: string, account: string) { this.check(); return this.items.delete(`${service}/${account}`); }
}

export const START = Date.parse('2026-12-08T00:00:00Z');

/**
 * Deps for running the CLI in process: a fresh config directory, a test clock that sleeps by
 * moving forward (every wait is recorded), captured output and an abortable "Ctrl-C".
 */
export function harness(options: { keychain?: Keychain | null; env?: Record<string, string>; stdin?: string; fetch?: typeof fetch } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'rz-cli-'));
  const configHome = join(root, 'config');
  const out: string[] = [];
  const err: string[] = [];
  const waits: number[] = [];
  const opened: string[] = [];
  const interrupt = new AbortController();
  let now = START;
  let onSleep: (count: number) => void = () => undefined;
  const keychain = options.keychain === undefined ? new MemoryKeychain() : options.keychain;
  const deps: Deps = {
    env: { XDG_CONFIG_HOME: configHome, DISPLAY: ':0', ...options.env },
    platform: 'linux',
    homedir: root,
    hostname: 'ada-laptop',
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    readStdin: async () => options.stdin ?? '',
    fetch: options.fetch ?? globalThis.fetch,
    loadKeychain: async () => keychain,
    openBrowser: (url) => opened.push(url),
    now: () => now,
    sleep: async (ms, signal) => {
      waits.push(ms);
      onSleep(waits.length);
      if (signal.aborted) throw signal.reason;
      now += ms;
    },
    signal: interrupt.signal,
  };
  return {
    deps,
    keychain,
    configDir: join(configHome, 'rz'),
    waits,
    opened,
    interrupt,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
    elapsed: () => now - START,
    onSleep: (hook: (count: number) => void) => { onSleep = hook; },
    run: (...argv: string[]) => run(argv, deps),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export type Harness = ReturnType<typeof harness>;
