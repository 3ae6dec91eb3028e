import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: servers run from here, as `npm start` does. */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** A server under test, in its own process. */
export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** The last few KiB of its stderr, for error messages. */
  stderrTail(): string;
  /** True once it has exited; a server that dies mid-run fails the run. */
  exited(): boolean;
  stop(): Promise<void>;
}

const newest = (dir: string): number =>
  Math.max(
    0,
    ...readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs),
  );

/** Builds dist/ when it is missing or older than src/, so the benchmark never measures stale code. */
export function ensureBuilt(): void {
  const cli = join(ROOT, 'dist', 'cli.js');
  if (existsSync(cli) && newest(join(ROOT, 'dist')) >= newest(join(ROOT, 'src'))) return;
  console.log('dist/ is missing or older than src/: npm run build');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

/** A loopback port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** How a server process is launched, beyond its Node arguments and environment. */
export interface Launch {
  /** A program to run Node under, with its options (the instruction count runs valgrind). */
  readonly wrapper?: readonly string[];
  /** How long the server may take to answer (default 30 s). */
  readonly startTimeoutMs?: number;
}

/**
 * Starts `node <args>` (under `launch.wrapper` if given) with stdout sent to /dev/null (request
 * logs are written, as in production, but not kept) and resolves once `ready(url)` answers true.
 */
export async function startServer(
  name: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  port: number,
  ready: (url: string) => Promise<boolean>,
  launch: Launch = {},
): Promise<ServerProcess> {
  const [command = process.execPath, ...prefix] = launch.wrapper ?? [];
  const argv = launch.wrapper ? [...prefix, process.execPath, ...args] : [...args];
  const child: ChildProcess = spawn(command, argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4096)));
  const exit = once(child, 'exit');
  let gone = false;
  void exit.then(() => (gone = true));
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name}: could not start ${command}`);
  const server: ServerProcess = {
    name,
    url: `http://127.0.0.1:${port}`,
    pid,
    stderrTail: () => stderr.trim(),
    exited: () => gone,
    async stop() {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    },
  };
  const timeoutMs = launch.startTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  while (!(await probe(ready, server.url))) {
    if (gone || Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name} did not start${gone ? ' (it exited)' : ` within ${timeoutMs / 1000} s`}:\n${server.stderrTail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return server;
}

async function probe(ready: (url: string) => Promise<boolean>, url: string): Promise<boolean> {
  try {
    return await ready(url);
  } catch {
    return false; // not listening yet
  }
}

/**
 * The environment assignments and Node flags of `npm start` (e.g. `MALLOC_ARENA_MAX=1 node
 * --max-semi-space-size=4 dist/cli.js serve`), read from package.json so the benchmark runs rz-auth
 * exactly as shipped.
 */
export function startCommand(): { env: Record<string, string>; flags: string[] } {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const match = /^((?:[A-Z_]+=\S+\s+)*)node\s+(.*?)\s*dist\/cli\.js serve$/.exec(scripts.start);
  if (!match) throw new Error(`unexpected start script: ${scripts.start}`);
  const words = (text: string | undefined) => (text ?? '').split(/\s+/).filter(Boolean);
  // Split at the first `=` only: a value may hold more (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
  const env = Object.fromEntries(
    words(match[1]).map((assignment) => {
      const [name, ...value] = assignment.split('=');
      return [name, value.join('=')];
    }),
  );
  return { env, flags: words(match[2]) };
}

/** rz-auth as `npm start` runs it: the built CLI, `serve`, with the same environment and Node flags. */
export async function startRzAuth(env: (port: number) => NodeJS.ProcessEnv, launch?: Launch): Promise<ServerProcess> {
  const port = await freePort();
  const ready = async (url: string) => (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok;
  const start = startCommand();
  return startServer('rz-auth', [...start.flags, join(ROOT, 'dist', 'cli.js'), 'serve'], { ...start.env, ...env(port) }, port, ready, launch);
}

/**
 * The bare Fastify ceiling (bench/ceiling-server.ts, loaded through tsx), with the same malloc
 * settings and Node flags as rz-auth, so that a ratio measures rz-auth's work, not runtime tuning.
 */
export async function startCeiling(launch?: Launch, extraEnv: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const port = await freePort();
  const { PATH, HOME } = process.env;
  const start = startCommand();
  const env = { ...start.env, ...(PATH === undefined ? {} : { PATH }), ...(HOME === undefined ? {} : { HOME }), ...extraEnv, PORT: String(port) };
  const ready = async (url: string) =>
    (await fetch(`${url}/api/me`, { headers: { authorization: 'Bearer ready' }, signal: AbortSignal.timeout(1000) })).ok;
  return startServer('ceiling', [...start.flags, '--import', 'tsx', join(ROOT, 'bench', 'ceiling-server.ts')], env, port, ready, launch);
}
