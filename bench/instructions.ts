import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createStore, rzAuthEnv } from './env.js';
import { type LoadResult, type LoadSpec, runRequests } from './load.js';
import { describeMachine, machineLine } from './machine.js';
import { type Scenario, SCENARIOS } from './scenarios.js';
import { ensureBuilt, ROOT, type ServerProcess, startCeiling, startRzAuth } from './servers.js';
import { type Credentials, createCredentials } from './setup.js';

/*
 * `npm run bench:instructions`: what one request costs in CPU instructions, counted by valgrind's
 * callgrind over every thread of the server (user space only: the kernel's share of a request,
 * the socket write, is not in it). Unlike requests per second, the count hardly moves with what
 * else the machine runs, so it shows a change of a few per cent that timing on a shared machine
 * cannot. It complements `npm run bench`, which stays the measure of the targets.
 *
 * Each server runs under callgrind with instrumentation off. It first gets a warm-up of each of
 * its scenarios' loads (the JIT settles); then, scenario by scenario, a warm-up of that load,
 * instrumentation switched on for a fixed number of requests, off again, and the counters dumped. Under valgrind the server is some fifty times slower, so every event-loop turn holds a
 * request from each of the 50 connections, for the ceiling and rz-auth alike.
 */

const USAGE = `Usage: npm run bench:instructions [-- options]   (needs valgrind: apt-get install valgrind)

  --requests N     requests counted per scenario (default 20000)
  --warmup N       warm-up requests per scenario before any counting (default 60000)
  --smoke          2000 after 5000: proves the harness works (what CI runs)
  --only a,b       only these scenarios: ${instructionScenarios().map((s) => s.id).join(', ')}
  --keep DIR       keep callgrind's dumps in DIR (one per scenario counted), to read with
                   callgrind_annotate --inclusive=yes DIR/callgrind.out.<pid>.<n>`;

/** The scenarios with a ratio to the ceiling and no background load: the hot path. */
function instructionScenarios(): Scenario[] {
  return SCENARIOS.filter((s) => s.cpus === 'hot' && !s.background && (s.id === 'ceiling' || s.bracketed));
}

interface Options {
  readonly requests: number;
  readonly warmup: number;
  readonly only: readonly string[] | null;
  /** Where to keep the dumps; null: a temporary directory, removed afterwards. */
  readonly keep: string | null;
}

function parseOptions(argv: readonly string[]): Options | string {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      options: { requests: { type: 'string' }, warmup: { type: 'string' }, smoke: { type: 'boolean', default: false }, only: { type: 'string' }, keep: { type: 'string' }, help: { type: 'boolean', default: false } },
    }).values;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (values.help) return '';
  const count = (value: string | undefined, name: string, fallback: number): number => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1, got "${value}"`);
    return n;
  };
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean) ?? null;
  const unknown = only?.filter((id) => !instructionScenarios().some((s) => s.id === id)) ?? [];
  if (unknown.length > 0) return `--only: unknown scenario ${unknown.join(', ')}`;
  try {
    return {
      requests: count(values.requests, 'requests', values.smoke ? 2000 : 20_000),
      warmup: count(values.warmup, 'warmup', values.smoke ? 5000 : 60_000),
      only,
      keep: values.keep ?? null,
    };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * valgrind names the pipes through which callgrind_control reaches a process after the USER and
 * HOST variables (rz-auth reads HOST as its listening address), so both sides get the same ones.
 */
const CONTROL_ENV = { USER: 'rz-bench', HOST: '127.0.0.1' };

function callgrindControl(pid: number, ...args: string[]): void {
  execFileSync('callgrind_control', [...args, String(pid)], { env: { ...process.env, ...CONTROL_ENV }, stdio: 'ignore' });
}

/** A server under callgrind, and the directory its counter dumps go to. */
interface Counted {
  readonly server: ServerProcess;
  readonly dumps: string;
}

function wrapper(dumps: string): string[] {
  return ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dumps, 'callgrind.out.%p')}`];
}

/** The dump written since `before` was listed, and the instructions it counted. */
async function newDump(dumps: string, before: ReadonlySet<string>): Promise<{ file: string; total: number }> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    for (const file of readdirSync(dumps).filter((f) => !before.has(f))) {
      const total = /^totals:\s+(\d+)/m.exec(readFileSync(join(dumps, file), 'utf8'));
      if (total) return { file: join(dumps, file), total: Number(total[1]) };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('callgrind wrote no dump within 60 s');
}

function assertAnswered(label: string, result: LoadResult): void {
  if (result.failures > 0) throw new Error(`${label}: ${result.failures} of ${result.responses} requests failed`);
}

/**
 * Requests just before counting, so the scenario's own data is in the caches again, and enough of
 * them for the JIT to settle again: when the first warm-up's connections close, V8 throws away the
 * optimized code of about thirty of node:http's and streams' functions ("dependent prototype chain
 * changed" under --trace-deopt, once per process), and on Node 24 2,000 requests left their
 * recompilation running into the count (about 2,000 instructions a request of TurboFan work).
 */
const RECENT_WARMUP = 10_000;

/**
 * V8's major collection (marking, sweeping and compaction, on the main thread and its helper
 * threads, all counted) runs when the old generation has grown enough: here every few tens of
 * thousands of requests, so a count of 20,000 holds one or none. One adds 1,500 to 6,000
 * instructions a request to the count it falls in (seen on 2026-11-24 on Node 20 and 24), more
 * than most changes being measured, so each count is also given without it. Its functions are
 * told by V8's names, which callgrind_annotate prints; the scavenger (the minor collection, the
 * same from one count to the next) stays in.
 */
const MINOR_GC = /Scaveng/;
const MAJOR_GC = /MarkCompact|ConcurrentMarking|Marking(?:Visitor|Worklists|Barrier|State)|IncrementalMarking|Sweeper|MarkBit|PointersUpdatingVisitor|Evacuator/;

/** The instructions of a dump spent in V8's major collection (self cost, by function name). */
function majorGcInstructions(file: string): number {
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  let total = 0;
  for (const line of annotated.split('\n')) {
    const [, cost, name] = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line) ?? [];
    if (cost === undefined || name === undefined || MINOR_GC.test(name) || !MAJOR_GC.test(name)) continue;
    total += Number(cost.replaceAll(',', ''));
  }
  return total;
}

interface Count {
  readonly file: string;
  readonly perRequest: number;
  /** Of which V8's major collection. */
  readonly majorGcPerRequest: number;
}

/** Instructions per request of one load, on a server warmed up already: count `requests` of them. */
async function countInstructions({ server, dumps }: Counted, spec: LoadSpec, options: Options): Promise<Count> {
  assertAnswered('warm-up', await runRequests(server.url, spec, Math.min(RECENT_WARMUP, options.warmup)));
  const before = new Set(readdirSync(dumps));
  callgrindControl(server.pid, '--zero');
  callgrindControl(server.pid, '--instr=on');
  const measured = await runRequests(server.url, spec, options.requests);
  callgrindControl(server.pid, '--instr=off');
  callgrindControl(server.pid, '--dump');
  assertAnswered('measurement', measured);
  const { file, total } = await newDump(dumps, before);
  return { file, perRequest: total / options.requests, majorGcPerRequest: majorGcInstructions(file) / options.requests };
}

interface Row {
  readonly id: string;
  readonly title: string;
  readonly instructionsPerRequest: number;
  /** Of which V8's major collection: see {@link MAJOR_GC}. */
  readonly majorGcPerRequest: number;
  /** The ceiling's count over this one: the share of the ceiling's speed it would have if instructions were all. */
  readonly ratio: number | null;
  /** The same ratio with the major collection left out of both counts. */
  readonly ratioWithoutMajorGc: number | null;
}

async function measure(options: Options): Promise<Row[]> {
  const scenarios = instructionScenarios().filter((s) => s.id === 'ceiling' || options.only === null || options.only.includes(s.id));
  const store = await createStore('sqlite');
  const dumps = options.keep ?? mkdtempSync(join(tmpdir(), 'rz-instructions-'));
  if (options.keep) mkdirSync(options.keep, { recursive: true });
  const launch = { wrapper: wrapper(dumps), startTimeoutMs: 300_000 };
  const counts = new Map<string, Count>();
  let server: ServerProcess | undefined;
  try {
    for (const kind of ['ceiling', 'rz-auth'] as const) {
      const own = scenarios.filter((s) => s.server === kind);
      if (own.length === 0) continue;
      server = kind === 'ceiling' ? await startCeiling(launch, CONTROL_ENV) : await startRzAuth((port) => ({ ...rzAuthEnv(store, port), ...CONTROL_ENV }), launch);
      const credentials: Credentials =
        kind === 'rz-auth' ? await createCredentials(server.url) : { email: '', password: '', jwt: 'ceiling', apiToken: 'ceiling', appToken: 'ceiling' };
      const loads = own.map((scenario) => scenario.load(credentials, { connections: 50, loginConnections: 16, probeConnections: 2 }));
      // Every load of this server first, so that the JIT has compiled all their code before any
      // count: otherwise the first scenario counted also pays for late optimizations.
      for (const load of loads) assertAnswered('warm-up', await runRequests(server.url, load, options.warmup));
      for (const [i, scenario] of own.entries()) {
        const load = loads[i];
        if (!load) continue;
        const count = await countInstructions({ server, dumps }, load, options);
        counts.set(scenario.id, count);
        const majorGc = count.majorGcPerRequest >= 100 ? `, ${thousands(count.majorGcPerRequest)} of them V8's major collection` : '';
        console.log(`${scenario.id.padEnd(16)} ${thousands(count.perRequest)} instructions per request${majorGc}${options.keep ? ` (dump: ${count.file})` : ''}`);
      }
      await server.stop();
      server = undefined;
    }
  } finally {
    await server?.stop();
    if (!options.keep) rmSync(dumps, { recursive: true, force: true });
    await store.dispose();
  }
  const ceiling = counts.get('ceiling');
  return scenarios.map((s) => {
    const { perRequest = 0, majorGcPerRequest = 0 } = counts.get(s.id) ?? {};
    const compared = s.id !== 'ceiling' && ceiling !== undefined;
    return {
      id: s.id,
      title: s.title,
      instructionsPerRequest: perRequest,
      majorGcPerRequest,
      ratio: compared ? ceiling.perRequest / perRequest : null,
      ratioWithoutMajorGc: compared ? (ceiling.perRequest - ceiling.majorGcPerRequest) / (perRequest - majorGcPerRequest) : null,
    };
  });
}

const thousands = (n: number): string => Math.round(n).toLocaleString('en');
const ratioText = (ratio: number | null): string => (ratio === null ? '—' : ratio.toFixed(2));

function table(rows: readonly Row[]): string {
  const lines = [
    ['scenario', 'instructions/request', '× ceiling', 'of which major GC', '× ceiling without it'],
    ...rows.map((r) => [r.title, thousands(r.instructionsPerRequest), ratioText(r.ratio), thousands(r.majorGcPerRequest), ratioText(r.ratioWithoutMajorGc)]),
  ];
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...lines.map((l) => (l[i] ?? '').length)));
  return lines.map((l, row) => l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ') + (row === 0 ? `\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : '')).join('\n');
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (typeof options === 'string') {
    console.error(options ? `bench:instructions: ${options}\n\n${USAGE}` : USAGE);
    return options ? 2 : 0;
  }
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error('bench:instructions: valgrind is not installed (Debian: apt-get install valgrind)');
    return 1;
  }
  const machine = describeMachine();
  console.log(`rz-auth instruction count: ${options.requests} requests after ${options.warmup}, 50 connections\nmachine: ${machineLine(machine)}`);
  ensureBuilt();
  try {
    const rows = await measure(options);
    console.log(`\n${table(rows)}\n`);
    const dir = join(ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'instructions-latest.json');
    writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), machine, ...options, scenarios: rows }, null, 2)}\n`);
    console.log(`results: ${file}`);
    return 0;
  } catch (error) {
    console.error(`\nbench:instructions: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

process.exitCode = await main();
