import { assertHealthy, type LoadResult, type LoadSpec, runLoad, startLoad } from './load.js';
import { machineBusySeconds, peakRssKiB, processCpuSeconds, resetPeakRss, rssKiB } from './procfs.js';
import type { LoadShape, Scenario } from './scenarios.js';
import type { ServerProcess } from './servers.js';
import type { Credentials } from './setup.js';

/** What a load was, without its credentials. */
export interface LoadDescription {
  readonly request: string;
  readonly connections: number;
}

const describeLoad = (spec: LoadSpec): LoadDescription => ({ request: `${spec.method} ${spec.path}`, connections: spec.connections });

/** One measured round of one scenario. */
export interface RoundResult extends LoadResult {
  readonly round: number;
  readonly load: LoadDescription;
  /** Peak resident memory of the server during warm-up and measurement, in MB. */
  readonly peakRssMb: number | null;
  /** CPU used during measurement, in cores: the server, this process (the load generator), the rest of the machine. */
  readonly cpu: { readonly server: number | null; readonly loadGenerator: number; readonly other: number | null };
  /** The server's CPU time per 2xx response, in µs (with a background load, its requests' too). */
  readonly cpuUsPerRequest: number | null;
  /** The background load (the login flood), when the scenario has one. */
  readonly background?: LoadDescription & { readonly rps: number; readonly p99Ms: number; readonly failures: number };
  /** For a bracketed scenario: each slice of the round, with the mean of the two ceiling slices around it. */
  readonly slices?: readonly BracketedSlice[];
}

/** One slice of a bracketed scenario, and the ceiling measured just before and just after it. */
export interface BracketedSlice {
  readonly rps: number;
  readonly cpuUsPerRequest: number | null;
  readonly ceilingRps: number;
  readonly ceilingCpuUsPerRequest: number | null;
  /** The load generator's CPU, in cores, during the busier of the two ceiling slices. */
  readonly ceilingLoadGenerator: number;
}

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;
const meanOrNull = (values: readonly (number | null)[]): number | null => (values.includes(null) ? null : mean(values as readonly number[]));

/** The median of `values` (the mean of the two middle ones for an even count); null for none. */
export function middleValue(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2 : (sorted[Math.floor(middle)] ?? null);
}

/**
 * A bracketed round from its slices (`parts`) and the ceiling slices around them (`ceilings`, one
 * more than `parts`: before the first, between each two, after the last). Counts and CPU are over
 * the whole round; latency is the median of the slices' figures (a slice's histogram is not kept).
 */
export function joinSlices(parts: readonly RoundResult[], ceilings: readonly RoundResult[]): RoundResult {
  const [first] = parts;
  if (!first || ceilings.length !== parts.length + 1) throw new Error('a bracketed round needs its slices and one more ceiling slice');
  const seconds = parts.reduce((sum, p) => sum + p.seconds, 0);
  const responses = parts.reduce((sum, p) => sum + p.responses, 0);
  const statusCodes: Record<string, number> = {};
  for (const p of parts) for (const [code, n] of Object.entries(p.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const server = meanOrNull(parts.map((p) => p.cpu.server));
  const rss = parts.map((p) => p.peakRssMb).filter((v): v is number => v !== null);
  const slices = parts.map((p, i): BracketedSlice => {
    const around = [ceilings[i], ceilings[i + 1]].filter((c): c is RoundResult => c !== undefined);
    return {
      rps: p.rps,
      cpuUsPerRequest: p.cpuUsPerRequest,
      ceilingRps: mean(around.map((c) => c.rps)),
      ceilingCpuUsPerRequest: meanOrNull(around.map((c) => c.cpuUsPerRequest)),
      ceilingLoadGenerator: Math.max(...around.map((c) => c.cpu.loadGenerator)),
    };
  });
  const rps = parts.reduce((sum, p) => sum + p.rps * p.seconds, 0) / seconds;
  return {
    ...first,
    rps,
    p50Ms: middleValue(parts.map((p) => p.p50Ms)) ?? first.p50Ms,
    p99Ms: middleValue(parts.map((p) => p.p99Ms)) ?? first.p99Ms,
    maxMs: Math.max(...parts.map((p) => p.maxMs)),
    responses,
    failures: parts.reduce((sum, p) => sum + p.failures, 0),
    statusCodes,
    seconds,
    peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
    cpu: { server, loadGenerator: mean(parts.map((p) => p.cpu.loadGenerator)), other: meanOrNull(parts.map((p) => p.cpu.other)) },
    cpuUsPerRequest: server === null || rps === 0 ? null : (server / rps) * 1e6,
    slices,
  };
}

export interface Timing {
  readonly warmupSeconds: number;
  readonly seconds: number;
}

interface CpuMark {
  readonly at: number;
  readonly server: number | null;
  readonly self: number;
  readonly machine: number | null;
}

const mark = (pid: number): CpuMark => {
  const self = process.cpuUsage();
  return { at: performance.now(), server: processCpuSeconds(pid), self: (self.user + self.system) / 1e6, machine: machineBusySeconds() };
};

function cpuBetween(a: CpuMark, b: CpuMark): RoundResult['cpu'] {
  const wall = (b.at - a.at) / 1000;
  const cores = (x: number | null, y: number | null) => (x === null || y === null ? null : (y - x) / wall);
  const server = cores(a.server, b.server);
  const loadGenerator = (b.self - a.self) / wall;
  const machine = cores(a.machine, b.machine);
  const other = machine === null || server === null ? null : Math.max(0, machine - server - loadGenerator);
  return { server, loadGenerator, other };
}

/** Samples the server's RSS every 100 ms; the kernel's peak mark catches what falls between samples. */
function watchRss(pid: number): () => number | null {
  const kernelPeak = resetPeakRss(pid);
  let peak = rssKiB(pid) ?? 0;
  const timer = setInterval(() => (peak = Math.max(peak, rssKiB(pid) ?? 0)), 100);
  return () => {
    clearInterval(timer);
    const hwm = kernelPeak ? (peakRssKiB(pid) ?? 0) : 0;
    const kib = Math.max(peak, hwm);
    return kib === 0 ? null : kib / 1024;
  };
}

/**
 * Warm-up, then measurement, of one scenario against one server. The background load (if any)
 * starts first and runs throughout. Throws if the server died or either load was mostly errors.
 */
export async function measureRound(round: number, scenario: Scenario, server: ServerProcess, credentials: Credentials, shape: LoadShape, timing: Timing): Promise<RoundResult> {
  const label = `${scenario.id} (round ${round})`;
  const stopRss = watchRss(server.pid);
  const backgroundSpec = scenario.background?.(credentials, shape);
  const background = backgroundSpec && startLoad(server.url, backgroundSpec, timing.warmupSeconds + timing.seconds + 60);
  try {
    const spec = scenario.load(credentials, shape);
    if (timing.warmupSeconds > 0) assertHealthy(`${label} warm-up`, await runLoad(server.url, spec, timing.warmupSeconds));
    const before = mark(server.pid);
    const result = await runLoad(server.url, spec, timing.seconds);
    const cpu = cpuBetween(before, mark(server.pid));
    assertHealthy(label, result);
    background?.stop();
    const flood = await background?.result;
    if (flood) assertHealthy(`${label} background load`, flood);
    if (server.exited()) throw new Error(`${server.name} exited during ${label}:\n${server.stderrTail()}`);
    return {
      ...result,
      round,
      load: describeLoad(spec),
      peakRssMb: stopRss(),
      cpu,
      cpuUsPerRequest: cpu.server === null || result.rps === 0 ? null : (cpu.server / result.rps) * 1e6,
      ...(flood && backgroundSpec ? { background: { ...describeLoad(backgroundSpec), rps: flood.rps, p99Ms: flood.p99Ms, failures: flood.failures } } : {}),
    };
  } finally {
    background?.stop();
    stopRss();
  }
}

/**
 * Waits until the server is idle (a login flood leaves queued hashes behind), so one round's
 * leftovers are not measured in the next. Gives up after 15 s.
 */
export async function settle(server: ServerProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const a = processCpuSeconds(server.pid);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const b = processCpuSeconds(server.pid);
    if (a === null || b === null || (b - a) / 0.25 < 0.05) return;
  }
}
