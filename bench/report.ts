import type { RecordableHistogram } from 'node:perf_hooks';
import { createHistogram } from 'node:perf_hooks';
import type { Pair, Measured } from './schedule.js';
import type { Scenario, Target } from './scenarios.js';

/** ok, MISS, or neither: the middle half of the slices' ratios lies on both sides of the target. */
export type Outcome = 'ok' | 'MISS' | 'within noise' | 'n/a';

export interface Check {
  readonly label: string;
  readonly outcome: Outcome;
}

/**
 * A scenario's ratio to its baseline: the median over its slices, and the middle half of them. On
 * the server's CPU time per answer (the baseline's ÷ the scenario's, so higher is better, as with
 * req/s) wherever /proc gives it: it is what the server spent, whatever else loaded the machine;
 * req/s otherwise.
 */
export interface Ratio {
  readonly baseline: string;
  readonly basis: 'CPU' | 'req/s';
  readonly median: number;
  /** First and third quartile: how far the slices' ratios spread, i.e. the noise of this run. */
  readonly low: number;
  readonly high: number;
  readonly slices: number;
}

/** One row of the table, from every slice of one scenario. */
export interface Summary {
  readonly id: string;
  readonly title: string;
  /** 2xx responses per second over all its slices. */
  readonly rps: number;
  /** The server's CPU µs per 2xx answer over all its slices. */
  readonly cpuUs: number | null;
  readonly ratio: Ratio | null;
  /** The median of the slices' req/s ratios, reported beside the CPU ratio. */
  readonly rpsRatio: number | null;
  /** Latency of 2xx responses over all its slices. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time over wall time, every thread, over all its slices: 1 is one core fully busy. */
  readonly serverCores: number | null;
  /** The highest of its slices. */
  readonly peakRssMb: number | null;
  /** The highest of its slices: near 1, the load generator rather than the server may set the pace. */
  readonly loadGeneratorCores: number;
  readonly backgroundRps: number | null;
  /** The mail delivery child's CPU µs per mail accepted by the relay, over all its slices; null without one. */
  readonly deliveryCpuUsPerMail: number | null;
  readonly seconds: number;
  readonly checks: readonly Check[];
  readonly pairs: readonly Pair[];
}

/** The `q` quantile of `values` (0.5: the median), interpolating between neighbours. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = sorted[Math.floor(at)] ?? 0;
  const above = sorted[Math.ceil(at)] ?? below;
  return below + (above - below) * (at - Math.floor(at));
}

const rpsRatios = (pairs: readonly Pair[]) => pairs.filter((p) => p.baselineRps > 0).map((p) => p.rps / p.baselineRps);

function ratioOf(scenario: Scenario, pairs: readonly Pair[]): Ratio | null {
  const cpu = pairs.every((p) => p.cpuUs !== null && p.cpuUs > 0 && p.baselineCpuUs !== null);
  const ratios = cpu ? pairs.map((p) => (p.baselineCpuUs ?? 0) / (p.cpuUs ?? 1)) : rpsRatios(pairs);
  if (!scenario.baseline || ratios.length === 0) return null;
  const basis = cpu ? 'CPU' : 'req/s';
  return { baseline: scenario.baseline, basis, median: quantile(ratios, 0.5), low: quantile(ratios, 0.25), high: quantile(ratios, 0.75), slices: ratios.length };
}

function check(target: Target, s: Omit<Summary, 'checks'>, cores: number): Check {
  const met = (ok: boolean | null): Outcome => (ok === null ? 'n/a' : ok ? 'ok' : 'MISS');
  switch (target.kind) {
    case 'ratio': {
      const label = `≥ ${target.min.toFixed(2)}× ${s.ratio?.baseline ?? 'baseline'}`;
      if (!s.ratio) return { label, outcome: 'n/a' };
      const outcome = s.ratio.low >= target.min ? 'ok' : s.ratio.high < target.min ? 'MISS' : 'within noise';
      return { label, outcome };
    }
    case 'rps':
      return { label: `≥ ${target.min} req/s`, outcome: met(s.rps >= target.min) };
    case 'p99':
      return { label: `p99 < ${target.maxMs} ms`, outcome: met(s.p99Ms < target.maxMs) };
    case 'cores':
      return { label: `CPU ≥ ${Math.round(target.minShare * 100)}% of ${cores} cores`, outcome: met(s.serverCores === null ? null : s.serverCores >= target.minShare * cores) };
    case 'rss':
      return { label: `RSS < ${target.maxMb} MB`, outcome: met(s.peakRssMb === null ? null : s.peakRssMb < target.maxMb) };
    case 'mails':
      return { label: `≥ ${target.min} mails/s sent`, outcome: met(s.backgroundRps === null ? null : s.backgroundRps >= target.min) };
  }
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const maxOrNull = (values: readonly (number | null)[]) => (values.includes(null) || values.length === 0 ? null : Math.max(...(values as number[])));

/** Reduces each scenario's slices to its row; `cores` is what the machine has, for the CPU target. */
export function summarize(scenarios: readonly Scenario[], results: ReadonlyMap<string, Measured>, cores: number): Summary[] {
  return scenarios.flatMap((scenario) => {
    const { slices = [], pairs = [] } = results.get(scenario.id) ?? {};
    if (slices.length === 0) return [];
    const seconds = sum(slices.map((s) => s.seconds));
    const latency: RecordableHistogram = createHistogram();
    for (const s of slices) latency.add(s.latencyUs);
    const cpu = slices.map((s) => (s.serverCores === null ? null : s.serverCores * s.seconds));
    const answered = sum(slices.map((s) => s.ok));
    const cpuUs = slices.map((s) => (s.serverCpuUs === null ? null : s.serverCpuUs * s.ok));
    const rpsRatio = rpsRatios(pairs);
    const background = slices.flatMap((s) => (s.backgroundRps === undefined ? [] : [s.backgroundRps]));
    const delivery = slices.flatMap((s) => (s.delivery ? [s.delivery] : []));
    const mailsSent = sum(delivery.map((d) => d.mails));
    const base: Omit<Summary, 'checks'> = {
      id: scenario.id,
      title: scenario.title,
      rps: sum(slices.map((s) => s.rps * s.seconds)) / seconds,
      cpuUs: cpuUs.includes(null) || answered === 0 ? null : sum(cpuUs as number[]) / answered,
      ratio: ratioOf(scenario, pairs),
      rpsRatio: scenario.baseline && rpsRatio.length > 0 ? quantile(rpsRatio, 0.5) : null,
      p50Ms: latency.count === 0 ? 0 : latency.percentile(50) / 1000,
      p99Ms: latency.count === 0 ? 0 : latency.percentile(99) / 1000,
      serverCores: cpu.includes(null) ? null : sum(cpu as number[]) / seconds,
      peakRssMb: maxOrNull(slices.map((s) => s.peakRssMb)),
      loadGeneratorCores: Math.max(...slices.map((s) => s.loadGeneratorCores)),
      backgroundRps: background.length === 0 ? null : sum(background) / background.length,
      deliveryCpuUsPerMail: delivery.length === 0 || mailsSent === 0 ? null : (sum(delivery.map((d) => d.cpuSeconds)) * 1e6) / mailsSent,
      seconds,
      pairs,
    };
    return [{ ...base, checks: scenario.targets.map((t) => check(t, base, cores)) }];
  });
}

/** What makes this run's figures less trustworthy, said next to them. */
export function warnings(scenarios: readonly Scenario[], summaries: readonly Summary[]): string[] {
  const baselines = new Set(scenarios.flatMap((s) => (s.baseline ? [s.baseline] : [])));
  return summaries
    .filter((s) => baselines.has(s.id) && s.loadGeneratorCores >= 0.9)
    .map((s) => `the load generator used ${s.loadGeneratorCores.toFixed(2)} of a core during ${s.id}: it may be the load generator's limit, which pushes the ratios to it towards 1`);
}

/** One line: each scenario with an RSS target, its peak against the target, and the verdict. */
export function rssLine(summaries: readonly Summary[]): string | null {
  const rows = summaries.flatMap((s) => {
    const check = s.checks.find((c) => c.label.startsWith('RSS'));
    return check ? [`${s.id} ${fixed(s.peakRssMb, 0)} MB ${check.outcome}`] : [];
  });
  const target = summaries.flatMap((s) => s.checks.filter((c) => c.label.startsWith('RSS')))[0]?.label;
  return target === undefined ? null : `peak RSS per scenario (${target}): ${rows.join(', ')}`;
}

const fixed = (value: number | null, digits: number) => (value === null ? 'n/a' : value.toFixed(digits));
const ratioText = (value: number) => (value >= 0.1 ? value.toFixed(2) : value.toPrecision(2));
/** Columns 1 to NUMERIC_COLUMNS hold numbers (right-aligned). */
const NUMERIC_COLUMNS = 9;

/** The rows of the table, as text cells. */
export function tableRows(summaries: readonly Summary[]): string[][] {
  const basis = summaries.find((s) => s.ratio)?.ratio?.basis ?? 'CPU';
  const header = ['scenario', 'req/s', 'CPU µs/req', `× baseline (${basis})`, 'middle half', '× baseline (req/s)', 'p50 ms', 'p99 ms', 'CPU cores', 'peak RSS MB', 'targets (informational)'];
  const rows = summaries.map((s) => [
    // The CPU columns are the API process's; the delivery child's cost is said beside them.
    s.deliveryCpuUsPerMail === null ? s.title : `${s.title}; delivery child ${s.deliveryCpuUsPerMail.toFixed(0)} µs CPU/mail`,
    Math.round(s.rps).toString(),
    fixed(s.cpuUs, 1),
    s.ratio ? `${ratioText(s.ratio.median)}× ${s.ratio.baseline}` : '—',
    s.ratio ? `${ratioText(s.ratio.low)}–${ratioText(s.ratio.high)}` : '—',
    s.rpsRatio === null ? '—' : ratioText(s.rpsRatio),
    fixed(s.p50Ms, 2),
    fixed(s.p99Ms, 2),
    fixed(s.serverCores, 2),
    fixed(s.peakRssMb, 0),
    s.checks.map((c) => `${c.label}: ${c.outcome}`).join('; '),
  ]);
  return [header, ...rows];
}

/** A plain-text table for the terminal. */
export function textTable(rows: readonly string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const numeric = (i: number) => i > 0 && i <= NUMERIC_COLUMNS;
  const line = (r: readonly string[]) => r.map((cell, i) => (numeric(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  const [header = [], ...body] = rows;
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** The same table in Markdown. */
export function markdownTable(rows: readonly string[][]): string {
  const [header = [], ...body] = rows;
  const align = header.map((_, i) => (i > 0 && i <= NUMERIC_COLUMNS ? '---:' : '---'));
  return [header, align, ...body].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
