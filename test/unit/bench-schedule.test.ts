import { createHistogram } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { Slice } from '../../bench/measure.js';
import { parseOptions } from '../../bench/options.js';
import { quantile, rssLine, summarize } from '../../bench/report.js';
import { runScenarios } from '../../bench/schedule.js';
import { type Scenario, SCENARIOS, selectScenarios } from '../../bench/scenarios.js';

/** A slice of 2 s at `rps`, every request taking 1 ms; the server's CPU per answer unknown (as off Linux) unless given. */
function slice(rps: number, serverCpuUs: number | null = null): Slice {
  const latencyUs = createHistogram();
  latencyUs.record(1000);
  return { rps, ok: rps * 2, latencyUs, responses: rps * 2, failures: 0, statusCodes: { '200': rps * 2 }, seconds: 2, serverCores: 1, serverCpuUs, loadGeneratorCores: 0.5, peakRssMb: 90 };
}

const scenario = (id: string, extra: Partial<Scenario> = {}): Scenario => ({
  id,
  title: id,
  server: 'rz-auth',
  load: () => ({ method: 'GET', path: '/', connections: 1 }),
  targets: [],
  ...extra,
});

/** Runs the schedule with a measure that answers from `rps(id, n)` (n: that scenario's nth slice) and records the calls. */
async function schedule(scenarios: readonly Scenario[], slices: number, rps: (id: string, n: number) => number = () => 1000, cpuUs?: (id: string, n: number) => number) {
  const calls: string[] = [];
  const counts = new Map<string, number>();
  const results = await runScenarios(scenarios, { slices, sliceSeconds: 2 }, async (s, seconds, first) => {
    calls.push(`${s.id} ${seconds}s${first ? ' warm' : ''}`);
    const n = counts.get(s.id) ?? 0;
    counts.set(s.id, n + 1);
    return slice(rps(s.id, n), cpuUs?.(s.id, n) ?? null);
  });
  return { calls, results };
}

/*
 * Why a ratio can be trusted on a shared machine: each slice of a scenario is measured between two
 * slices of its baseline and compared with them, and the row reports the median over the slices.
 */
describe('the benchmark: slices alternating with the baseline', () => {
  it('measures each scenario between slices of its baseline, shares a baseline slice between neighbours, and warms each load once', async () => {
    const ceiling = scenario('ceiling', { server: 'ceiling' });
    const a = scenario('a', { baseline: 'ceiling' });
    const b = scenario('b', { baseline: 'ceiling' });
    const probe = scenario('probe');
    const c = scenario('c', { baseline: 'a' });
    const { calls, results } = await schedule([ceiling, a, b, probe, c], 2);
    expect(calls).toEqual([
      'ceiling 2s warm', 'a 2s warm', 'ceiling 2s', 'a 2s', 'ceiling 2s',
      'b 2s warm', 'ceiling 2s', 'b 2s', 'ceiling 2s',
      'probe 4s warm',
      'a 2s', 'c 2s warm', 'a 2s', 'c 2s', 'a 2s',
    ]);
    // The ceiling is only ever a baseline: its row is the slices taken next to the others.
    expect(results.get('ceiling')?.slices).toHaveLength(5);
    expect(results.get('ceiling')?.pairs).toEqual([]);
    // A scenario that is also a baseline keeps its own pairs and gains the slices measured for the other.
    expect(results.get('a')?.pairs).toHaveLength(2);
    expect(results.get('a')?.slices).toHaveLength(5);
    expect(results.get('c')?.pairs).toHaveLength(2);
  });

  it('reports the median of the slices’ ratios, unmoved by a ceiling that jumps once, with the middle half as the noise', async () => {
    const ceiling = SCENARIOS.find((s) => s.id === 'ceiling');
    const me = SCENARIOS.find((s) => s.id === 'me-api-token');
    if (!ceiling || !me) throw new Error('scenarios missing');
    // rz-auth at 0.9 of the ceiling throughout; the ceiling jumps from 20,000 to 30,000 after its third slice.
    const at = (n: number) => (n < 3 ? 20_000 : 30_000);
    const { results } = await schedule([ceiling, me], 5, (id, n) => (id === 'ceiling' ? at(n) : 0.9 * at(n + (n >= 2 ? 1 : 0))));
    expect(results.get('me-api-token')?.pairs.map((p) => p.baselineRps)).toEqual([20_000, 20_000, 25_000, 30_000, 30_000]);
    const [, row] = summarize([ceiling, me], results, 2);
    // The slice at the jump reads 27,000 / 25,000; the other four 0.9.
    expect(row?.ratio).toMatchObject({ baseline: 'ceiling', median: 0.9, low: 0.9, high: 0.9, slices: 5 });
    expect(row?.checks[0]).toEqual({ label: '≥ 0.65× ceiling', outcome: 'ok' });
  });

  it('calls a ratio target neither met nor missed while the middle half of the slices lies on both sides of it', async () => {
    const ceiling = scenario('ceiling', { server: 'ceiling' });
    const a = scenario('a', { baseline: 'ceiling', targets: [{ kind: 'ratio', min: 0.8 }] });
    const ratios = [0.7, 0.75, 0.8, 0.85, 0.9];
    const { results } = await schedule([ceiling, a], 5, (id, n) => (id === 'ceiling' ? 10_000 : 10_000 * (ratios[n] ?? 0)));
    const [, row] = summarize([ceiling, a], results, 2);
    expect(row?.ratio).toMatchObject({ median: 0.8, low: 0.75, high: 0.85 });
    expect(row?.checks).toEqual([{ label: '≥ 0.80× ceiling', outcome: 'within noise' }]);
  });

  it('judges a ratio on the server’s CPU time per answer where it is known, with req/s beside it', async () => {
    const ceiling = scenario('ceiling', { server: 'ceiling' });
    const a = scenario('a', { baseline: 'ceiling', targets: [{ kind: 'ratio', min: 0.65 }] });
    // The load generator held a's req/s to half the ceiling's, but a cost the server 16 µs per answer against 12.
    const { results } = await schedule([ceiling, a], 3, (id) => (id === 'ceiling' ? 20_000 : 10_000), (id) => (id === 'ceiling' ? 12 : 16));
    const [base, row] = summarize([ceiling, a], results, 2);
    expect(row?.ratio).toMatchObject({ basis: 'CPU', median: 0.75, low: 0.75, high: 0.75 });
    expect(row?.rpsRatio).toBe(0.5);
    expect(row?.cpuUs).toBe(16);
    expect(base?.cpuUs).toBe(12);
    expect(row?.checks).toEqual([{ label: '≥ 0.65× ceiling', outcome: 'ok' }]);
  });

  it('reports each scenario’s peak RSS against the target on one line', async () => {
    const ceiling = scenario('ceiling', { server: 'ceiling' });
    const a = scenario('a', { baseline: 'ceiling', targets: [{ kind: 'rss', maxMb: 150 }] });
    const b = scenario('b', { baseline: 'ceiling', targets: [{ kind: 'rss', maxMb: 80 }] });
    const { results } = await schedule([ceiling, a, b], 1);
    expect(rssLine(summarize([ceiling, a, b], results, 2))).toBe('peak RSS per scenario (RSS < 150 MB): a 90 MB ok, b 90 MB MISS');
    expect(rssLine(summarize([ceiling], results, 2))).toBeNull();
  });

  it('interpolates quantiles between neighbours', () => {
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([7], 0.75)).toBe(7);
  });
});

describe('the benchmark: scenarios and options', () => {
  it('every baseline names a scenario listed before it', () => {
    for (const [i, s] of SCENARIOS.entries()) {
      if (s.baseline) expect(SCENARIOS.slice(0, i).map((b) => b.id)).toContain(s.baseline);
    }
  });

  it('--only brings in what the chosen scenarios are compared with, in run order', () => {
    expect(selectScenarios(['me-user-jwt']).map((s) => s.id)).toEqual(['ceiling', 'me-user-jwt']);
    expect(selectScenarios(['me-probe-during-login-flood']).map((s) => s.id)).toEqual(['me-probe-during-login-flood']);
    expect(selectScenarios(null)).toEqual(SCENARIOS);
  });

  it('takes ten slices of 2 s by default and one in a smoke run', () => {
    expect(parseOptions([])).toMatchObject({ slices: 10, sliceSeconds: 2, warmupSeconds: 3, smoke: false });
    expect(parseOptions(['--smoke'])).toMatchObject({ slices: 1, sliceSeconds: 2, warmupSeconds: 1, smoke: true });
    expect(parseOptions(['--smoke', '--slices', '3']).slices).toBe(3);
  });
});
