import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * rz-auth as a real OS process (`node dist/cli.js ...`), for end-to-end tests that need what
 * inject() cannot give (a real socket, a second process on the same database, SIGKILL), and for
 * the benchmark (bench/), which starts its servers and sets up its credentials through these too.
 */

/** The repository root: the child runs from here, as `npm start` does. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The child's environment: only what is needed plus the overrides, never the test runner's own
 * variables (a stray PORT or DATABASE_URL in the developer's shell must not leak in).
 */
export function childEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, TMPDIR, SYSTEMROOT } = process.env;
  const base = Object.fromEntries(Object.entries({ PATH, HOME, TMPDIR, SYSTEMROOT }).filter(([, v]) => v !== undefined));
  return { ...base, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...overrides };
}

const newestFile = (dir: string): number =>
  Math.max(
    0,
    ...readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs),
  );

const CLI = join(ROOT, 'dist', 'cli.js');

/** The verifier package, built by the same `npm run build`: what the example service runs. */
const PACKAGE = join(ROOT, 'packages', 'verify');

const current = (built: string, source: string): boolean => existsSync(built) && newestFile(built) >= newestFile(source) - 1000;

/**
 * False when dist/cli.js is missing or older than src/, or the verifier package's dist/ than its
 * src/: running them would exercise stale code.
 */
export function builtIsCurrent(): boolean {
  return existsSync(CLI) && current(join(ROOT, 'dist'), join(ROOT, 'src')) && current(join(PACKAGE, 'dist'), join(PACKAGE, 'src'));
}

/**
 * The built CLI (`dist/cli.js`, what `npm start` and the bin run). `npm test` builds first
 * (pretest); a build older than the sources would test stale code, so that refuses to run.
 */
export function builtCli(): string {
  assertBuilt();
  return CLI;
}

/** Throws unless {@link builtIsCurrent}. */
export function assertBuilt(): void {
  if (!builtIsCurrent()) throw new Error('dist/ is older than src/ (or packages/verify/dist/ than its src/): run `npm run build` (npm test does it first)');
}

function spawnCli(args: readonly string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [builtCli(), ...args], { cwd: ROOT, env: childEnv(env), stdio: 'pipe' });
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout (unless discarded) and stderr so far. */
  output(): string;
  /**
   * Whether the output holds `text` within `timeoutMs`: the server writes its log asynchronously,
   * so a line about something that just happened may take up to its flush interval to appear.
   */
  outputHas(text: string, timeoutMs?: number): Promise<boolean>;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Sends the signal (default SIGTERM: graceful shutdown) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface SpawnOptions {
  /** True once the process serves `url`; default: GET /healthz answers 200. */
  readonly ready?: (url: string) => Promise<boolean>;
  readonly readyTimeoutMs?: number;
  /** Drops stdout instead of keeping it: a benchmark's request log would grow without bound. */
  readonly discardStdout?: boolean;
}

const healthz = async (url: string) => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).status === 200;

/**
 * Starts `node <args>` from the repository root with {@link childEnv}(env) and PORT set to a free
 * loopback port (unless env gives one), and resolves once `options.ready` answers true.
 */
export async function spawnNode(args: readonly string[], env: Record<string, string>, options: SpawnOptions = {}): Promise<ServerProcess> {
  // A test that must know the address first (PUBLIC_URL names it) picks the port itself.
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT);
  const stdio = ['ignore', options.discardStdout ? 'ignore' : 'pipe', 'pipe'] as const;
  const child = spawn(process.execPath, [...args], { cwd: ROOT, env: childEnv({ ...env, PORT: String(port) }), stdio: [...stdio] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const server: ServerProcess = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    async outputHas(text, timeoutMs = 3_000) {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return output.includes(text);
    },
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  try {
    await waitReady(server, options.ready ?? healthz, options.readyTimeoutMs ?? 20_000);
  } catch (error) {
    await server.stop('SIGKILL');
    throw error;
  }
  return server;
}

/**
 * Starts `rz-auth serve` on a free loopback port with the given environment (at least
 * DATABASE_URL) and resolves once it answers GET /healthz.
 */
export function spawnServer(env: Record<string, string>, readyTimeoutMs = 20_000): Promise<ServerProcess> {
  return spawnNode([builtCli(), 'serve'], env, { readyTimeoutMs });
}

/** Polls `ready` until it answers true, or fails with the process's output. */
async function waitReady(server: ServerProcess, ready: (url: string) => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void server.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      if (await ready(server.url)) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`server at ${server.url} not ready (exited: ${exited}):\n${server.output()}`);
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs one CLI command to completion, with `input` written to its stdin (then closed). A command
 * still running after `timeoutMs` is killed and reported with code null.
 */
export async function runCli(args: readonly string[], env: Record<string, string>, input = '', timeoutMs = 20_000): Promise<CliResult> {
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin?.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  // 'close', not 'exit': it fires after stdout and stderr are drained.
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body, or null for an empty one. */
  readonly body: unknown;
}

/** One JSON request over real HTTP. */
export async function request(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : (JSON.parse(text) as unknown) };
}
