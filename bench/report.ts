import { middleValue, type RoundResult } from './measure.js';
import { RSS_LIMIT_MB, type Scenario, type Target } from './scenarios.js';

/** A target and whether this run met it. */
export interface Check {
  readonly label: string;
  readonly met: boolean | null;
}

/** One scenario over all its rounds. */
export interface ScenarioSummary {
  readonly id: string;
  readonly title: string;
  /** The round reported: the median by req/s (by p99 for a latency probe). */
  readonly medianRound: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The highest of every round. */
  readonly peakRssMb: number | null;
  readonly serverCores: number | null;
  readonly cpuUsPerRequest: number | null;
  /**
   * req/s over the ceiling's: for a bracketed scenario the median over the slices of all its rounds
   * of a slice's req/s over the mean of the two ceiling slices around it, otherwise the median
   * round's req/s over the median of the ceiling's own rounds. Null for the ceiling and for latency
   * probes.
   */
  readonly ratio: number | null;
  /**
   * The ceiling's CPU time per request over this scenario's, taken the same way: the ratio if both
   * were CPU-bound with the core to themselves, so less sensitive to other processes than `ratio`.
   * Null with a background load.
   */
  readonly cpuRatio: number | null;
  readonly checks: readonly Check[];
  readonly rounds: readonly RoundResult[];
}

function medianOf(rounds: readonly RoundResult[], key: (r: RoundResult) => number): RoundResult {
  const sorted = [...rounds].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!middle) throw new Error('no rounds');
  return middle;
}

function check(target: Target, s: Omit<ScenarioSummary, 'checks'>, cores: number): Check {
  switch (target.kind) {
    case 'ratio':
      return { label: `≥ ${target.min.toFixed(2)}× ceiling`, met: s.ratio === null ? null : s.ratio >= target.min };
    case 'rps':
      return { label: `≥ ${target.min} req/s`, met: s.rps >= target.min };
    case 'p99':
      return { label: `p99 < ${target.maxMs} ms`, met: s.p99Ms < target.maxMs };
    case 'cores':
      return {
        label: `CPU ≥ ${Math.round(target.minShare * 100)}% of ${cores} cores`,
        met: s.serverCores === null ? null : s.serverCores >= target.minShare * cores,
      };
  }
}

/**
 * req/s and CPU ratios of a bracketed scenario: each slice of every round against the ceiling
 * slices just before and after it, then the median over all slices.
 */
function bracketedRatios(rounds: readonly RoundResult[]): { ratio: number | null; cpuRatio: number | null } {
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  for (const slice of rounds.flatMap((r) => r.slices ?? [])) {
    if (slice.ceilingRps > 0) ratios.push(slice.rps / slice.ceilingRps);
    if (slice.ceilingCpuUsPerRequest !== null && slice.cpuUsPerRequest) cpuRatios.push(slice.ceilingCpuUsPerRequest / slice.cpuUsPerRequest);
  }
  return { ratio: middleValue(ratios), cpuRatio: middleValue(cpuRatios) };
}

/** Reduces each scenario's rounds to the figures reported, with the ratio to the ceiling. */
export function summarize(scenarios: readonly Scenario[], results: ReadonlyMap<string, RoundResult[]>, cores: number): ScenarioSummary[] {
  const ceilingRounds = results.get('ceiling') ?? [];
  const ceilingMedian = ceilingRounds.length > 0 ? medianOf(ceilingRounds, (r) => r.rps) : null;
  const ceilingRps = ceilingMedian?.rps ?? null;
  const ceilingUs = ceilingMedian?.cpuUsPerRequest ?? null;
  return scenarios.flatMap((scenario) => {
    const rounds = results.get(scenario.id) ?? [];
    if (rounds.length === 0) return [];
    const median = medianOf(rounds, scenario.probe ? (r) => r.p99Ms : (r) => r.rps);
    const rss = rounds.map((r) => r.peakRssMb).filter((v): v is number => v !== null);
    const compared = scenario.id !== 'ceiling' && !scenario.probe;
    const ratios = scenario.bracketed
      ? bracketedRatios(rounds)
      : {
          ratio: compared && ceilingRps !== null ? median.rps / ceilingRps : null,
          cpuRatio: compared && !scenario.background && ceilingUs !== null && median.cpuUsPerRequest !== null ? ceilingUs / median.cpuUsPerRequest : null,
        };
    const base = {
      id: scenario.id,
      title: scenario.title,
      medianRound: median.round,
      rps: median.rps,
      p50Ms: median.p50Ms,
      p99Ms: median.p99Ms,
      peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
      serverCores: median.cpu.server,
      cpuUsPerRequest: scenario.background ? null : median.cpuUsPerRequest,
      ...ratios,
      rounds,
    };
    const checks = scenario.targets.map((t) => check(t, base, cores));
    if (scenario.server === 'rz-auth') checks.push({ label: `RSS < ${RSS_LIMIT_MB} MB`, met: base.peakRssMb === null ? null : base.peakRssMb < RSS_LIMIT_MB });
    return [{ ...base, checks }];
  });
}

const fixed = (value: number | null, digits: number) => (value === null ? 'n/a' : value.toFixed(digits));
const ratio = (value: number | null) => (value === null ? '—' : value >= 0.1 ? value.toFixed(2) : value.toPrecision(2));
/** Columns 1 to NUMERIC_COLUMNS hold numbers (right-aligned). */
const NUMERIC_COLUMNS = 8;
const mark = (met: boolean | null) => (met === null ? '?' : met ? 'ok' : 'MISS');

/** The rows of the table, as text cells. */
export function tableRows(summaries: readonly ScenarioSummary[]): string[][] {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MB', 'CPU cores', 'CPU µs/req', '× ceiling', '× ceiling (CPU)', 'targets (informational)'];
  const rows = summaries.map((s) => [
    s.title,
    Math.round(s.rps).toString(),
    fixed(s.p50Ms, 2),
    fixed(s.p99Ms, 2),
    fixed(s.peakRssMb, 0),
    fixed(s.serverCores, 2),
    s.cpuUsPerRequest === null ? '—' : s.cpuUsPerRequest.toFixed(0),
    ratio(s.ratio),
    ratio(s.cpuRatio),
    s.checks.map((c) => `${c.label}: ${mark(c.met)}`).join('; '),
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

/** The same table in Markdown, for the README. */
export function markdownTable(rows: readonly string[][]): string {
  const [header = [], ...body] = rows;
  const align = header.map((_, i) => (i > 0 && i <= NUMERIC_COLUMNS ? '---:' : '---'));
  return [header, align, ...body].map((r) => `| ${r.join(' | ')} |`).join('\n');
}
