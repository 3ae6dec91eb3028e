import { describe, expect, it } from 'vitest';
import { joinSlices, type RoundResult } from '../../bench/measure.js';
import { parseOptions, UsageError } from '../../bench/options.js';
import { summarize } from '../../bench/report.js';
import { SCENARIOS } from '../../bench/scenarios.js';

/** A measurement of `seconds` at `rps` 2xx per second, costing `us` of server CPU per request. */
function measured(rps: number, us: number, extra: Partial<RoundResult> = {}): RoundResult {
  const seconds = 2;
  return {
    round: 1,
    load: { request: 'GET /api/me', connections: 50 },
    rps,
    p50Ms: 1000 / rps,
    p99Ms: 4000 / rps,
    maxMs: 8000 / rps,
    responses: rps * seconds,
    failures: 0,
    statusCodes: { '200': rps * seconds },
    seconds,
    peakRssMb: 90,
    cpu: { server: (rps * us) / 1e6, loadGenerator: 0.5, other: 0 },
    cpuUsPerRequest: us,
    ...extra,
  };
}

/*
 * The hot-path ratios are taken slice by slice: each slice of rz-auth against the two ceiling
 * slices measured just before and after it, so a ceiling that jumps between slices moves only the
 * slices next to the jump, and the median over all slices leaves those out.
 */
describe('the benchmark: bracketed slices', () => {
  it('joins a round from its slices, each slice against the two ceiling slices around it', () => {
    const parts = [measured(8000, 100), measured(4000, 200, { peakRssMb: 95 })];
    const ceilings = [measured(10_000, 80), measured(10_000, 80), measured(5000, 160)];
    const round = joinSlices(parts, ceilings);
    expect(round.rps).toBe(6000);
    expect(round.responses).toBe(24_000);
    expect(round.statusCodes).toEqual({ '200': 24_000 });
    expect(round.seconds).toBe(4);
    expect(round.peakRssMb).toBe(95);
    // CPU over the whole round: 0.8 + 0.8 cores for 2 s each, over 6,000 responses a second.
    expect(round.cpuUsPerRequest).toBeCloseTo(133.33, 2);
    expect(round.slices).toEqual([
      { rps: 8000, cpuUsPerRequest: 100, ceilingRps: 10_000, ceilingCpuUsPerRequest: 80, ceilingLoadGenerator: 0.5 },
      { rps: 4000, cpuUsPerRequest: 200, ceilingRps: 7500, ceilingCpuUsPerRequest: 120, ceilingLoadGenerator: 0.5 },
    ]);
    expect(() => joinSlices(parts, ceilings.slice(1))).toThrow(/one more ceiling slice/);
  });

  it('reports the median of the slices’ ratios, unmoved by a ceiling that jumps once', () => {
    const scenario = SCENARIOS.find((s) => s.id === 'me-api-token');
    const ceilingScenario = SCENARIOS.find((s) => s.id === 'ceiling');
    if (!scenario || !ceilingScenario) throw new Error('scenarios missing');
    // rz-auth at 0.9 of the ceiling throughout, and the ceiling jumping from 20,000 to 30,000.
    const ceilingRps = [20_000, 20_000, 20_000, 30_000, 30_000, 30_000];
    const parts = ceilingRps.slice(1).map((_, i) => measured(0.9 * (i < 2 ? 20_000 : 30_000), 50 / 0.9));
    const ceilings = ceilingRps.map((rps) => measured(rps, 50));
    const results = new Map([
      ['ceiling', [measured(25_000, 50)]],
      ['me-api-token', [joinSlices(parts, ceilings)]],
    ]);
    const [, summary] = summarize([ceilingScenario, scenario], results, 2);
    // The slice at the jump reads 27,000 / 25,000; the other four 0.9.
    expect(summary?.ratio).toBeCloseTo(0.9, 6);
    expect(summary?.cpuRatio).toBeCloseTo(0.9, 6);
    expect(summary?.checks[0]).toEqual({ label: '≥ 0.80× ceiling', met: true });
  });

  it('takes five slices by default, one in a smoke run, and never more slices than seconds', () => {
    expect(parseOptions([]).slices).toBe(5);
    expect(parseOptions(['--smoke']).slices).toBe(1);
    expect(parseOptions(['--duration', '6', '--slices', '3']).slices).toBe(3);
    expect(() => parseOptions(['--duration', '2', '--slices', '3'])).toThrow(UsageError);
  });
});
