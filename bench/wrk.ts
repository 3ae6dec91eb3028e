import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import type { LoadResult, LoadSpec, RunningLoad } from './load.js';

/*
 * wrk (https://github.com/wg/wrk) as the load generator where it is installed: written in C, one
 * epoll thread, it costs the shared cores a fraction of what autocannon's JavaScript parser does,
 * so less of the machine goes to the load and a slower server wakes it less. Its request is set by
 * a Lua script; the script's done() prints one line the harness parses ({@link parseWrkOutput}).
 */

/** The line wrk's done() writes: the marker, then JSON. */
const MARKER = 'RZ-BENCH-RESULT ';

/** Latency quantiles printed per run, at the middle of each 0.1 % step: the row's histogram is built from them. */
const QUANTILES = 1000;

/** wrk's version line, or null when it is not installed (the harness then uses autocannon). */
export function wrkVersion(): string | null {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (probe.error) return null;
  return /^wrk (\S+)/m.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? 'unknown';
}

/** A Lua long-bracket string: no escaping, as long as the text holds no `]==]`. */
function luaString(text: string): string {
  if (text.includes(']==]')) throw new Error('a wrk body may not contain ]==]');
  return `[==[${text}]==]`;
}

/** The Lua script that sets wrk's request and reports what the harness needs as one JSON line. */
export function wrkScript(spec: LoadSpec): string {
  const headers: Record<string, string> = {};
  if (spec.token !== undefined) headers.Authorization = `Bearer ${spec.token}`;
  let body: string | undefined;
  if (spec.form !== undefined) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(spec.form).toString();
  } else if (spec.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(spec.body);
  }
  if (spec.bodies !== undefined) headers['Content-Type'] = 'application/json';
  return [
    `wrk.method = ${luaString(spec.method)}`,
    ...(body === undefined ? [] : [`wrk.body = ${luaString(body)}`]),
    ...Object.entries(headers).map(([name, value]) => `wrk.headers["${name}"] = ${luaString(value)}`),
    ...(spec.bodies === undefined || spec.bodies.length === 0 ? [] : bodiesScript(spec.bodies)),
    'done = function(summary, latency, requests)',
    '  local q = {}',
    `  for i = 1, ${QUANTILES} do q[i] = string.format("%d", latency:percentile((i - 0.5) * 100 / ${QUANTILES})) end`,
    '  local e = summary.errors',
    // os.clock() is this process's CPU time, every thread: what the load generator cost.
    `  io.write(string.format("\\n${MARKER}{\\"requests\\":%d,\\"duration_us\\":%d,\\"status\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"timeout\\":%d,\\"cpu_s\\":%.6f,\\"latency_us\\":[%s]}\\n",`,
    '    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout, os.clock(), table.concat(q, ",")))',
    'end',
    '',
  ].join('\n');
}

/** A request() that sends the bodies one per request, in order, starting again past the last. */
function bodiesScript(bodies: readonly string[]): string[] {
  return [
    `local bodies = {${bodies.map(luaString).join(',\n')}}`,
    'local sent = 0',
    'request = function()',
    '  sent = sent % #bodies + 1',
    '  return wrk.format(nil, nil, nil, bodies[sent])',
    'end',
  ];
}

/** What wrk's done() reported. */
interface WrkReport {
  readonly requests: number;
  readonly duration_us: number;
  /** Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses"). */
  readonly status: number;
  readonly connect: number;
  readonly read: number;
  readonly write: number;
  readonly timeout: number;
  readonly cpu_s: number;
  readonly latency_us: readonly number[];
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** A slice's result from wrk's output; throws when the result line is missing or malformed. */
export function parseWrkOutput(stdout: string, expectsRefusal = false): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith(MARKER));
  if (line === undefined) throw new Error(`wrk printed no result line:\n${stdout.slice(-2000)}`);
  const report = JSON.parse(line.slice(MARKER.length)) as Partial<WrkReport>;
  const counts = [report.requests, report.duration_us, report.status, report.connect, report.read, report.write, report.timeout, report.cpu_s];
  if (!counts.every(isCount) || !Array.isArray(report.latency_us) || !report.latency_us.every(isCount)) {
    throw new Error(`wrk's result line is malformed: ${line.slice(0, 300)}`);
  }
  const r = report as WrkReport;
  // wrk counts answers of 400 or more apart: they are the successes of a load that expects a 400.
  const ok = expectsRefusal ? r.status : r.requests - r.status;
  const seconds = r.duration_us / 1e6;
  const latencyUs = createHistogram();
  // No answer, no latency: wrk's empty histogram reads 0 at every quantile.
  if (ok > 0) for (const us of r.latency_us) latencyUs.record(Math.max(1, Math.round(us)));
  const statusCodes: Record<string, number> = { '< 400': ok };
  if (r.status > 0) statusCodes['≥ 400'] = r.status;
  return {
    rps: seconds > 0 ? ok / seconds : 0,
    ok,
    latencyUs,
    responses: r.requests,
    failures: r.requests - ok + r.connect + r.read + r.write + r.timeout,
    statusCodes,
    seconds,
    loadGeneratorCpuSeconds: r.cpu_s,
  };
}

/** Runs wrk (one thread) for `seconds`; stop() ends it early with SIGINT, on which wrk still reports. */
export function startWrk(baseUrl: string, spec: LoadSpec, seconds: number): RunningLoad {
  const dir = mkdtempSync(join(tmpdir(), 'rz-bench-wrk-'));
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(spec));
  const args = ['-t', '1', '-c', String(spec.connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', script, `${baseUrl}${spec.path}`];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const result = new Promise<LoadResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      rmSync(dir, { recursive: true, force: true });
      try {
        resolve(parseWrkOutput(stdout, spec.expectedStatus !== undefined));
      } catch (error) {
        reject(new Error(`wrk exited ${code ?? signal}: ${error instanceof Error ? error.message : String(error)}\n${stderr.slice(-1000)}`));
      }
    });
  });
  return { stop: () => void child.kill('SIGINT'), result };
}
