import type { Slice } from './measure.js';
import type { Scenario } from './scenarios.js';

/*
 * The order of measurement, and why the ratios can be trusted on a shared machine: a scenario with
 * a baseline is measured in slices alternating with slices of its baseline (baseline, scenario,
 * baseline, scenario, ..., baseline), and each slice is compared with the mean of the two baseline
 * slices just before and after it. Another tenant's burst moves the baseline by a fifth or more
 * within a minute; a ratio is only as good as the baseline measured next to it, and the median over
 * many slices leaves out the few that straddle a jump.
 */

/** Measures `seconds` of a scenario; `first` asks for its warm-up. */
export type MeasureSlice = (scenario: Scenario, seconds: number, first: boolean) => Promise<Slice>;

/** One slice of a scenario with the baseline measured around it. */
export interface Pair {
  readonly rps: number;
  /** The mean req/s of the baseline slices just before and just after. */
  readonly baselineRps: number;
  /** The server's CPU µs per answer in this slice, and the mean of the baseline's around it (null off Linux). */
  readonly cpuUs: number | null;
  readonly baselineCpuUs: number | null;
}

export interface Measured {
  /** Every slice of the scenario, those measured as another scenario's baseline included. */
  readonly slices: Slice[];
  /** Its own slices against its baseline; empty without a baseline. */
  readonly pairs: Pair[];
}

export interface Plan {
  /** Slices per scenario; a scenario without a baseline is measured for as long in one piece. */
  readonly slices: number;
  readonly sliceSeconds: number;
}

/**
 * Measures every scenario in order. A scenario that is only a baseline (the ceiling) gets no
 * measurement of its own: its row is made of the slices taken next to the others. When two
 * scenarios in a row share a baseline, the baseline slice between them serves both.
 */
export async function runScenarios(scenarios: readonly Scenario[], plan: Plan, measure: MeasureSlice): Promise<Map<string, Measured>> {
  const results = new Map<string, Measured>(scenarios.map((s) => [s.id, { slices: [], pairs: [] }]));
  const baselines = new Set(scenarios.flatMap((s) => (s.baseline ? [s.baseline] : [])));
  let last: { id: string; slice: Slice } | undefined;
  const take = async (scenario: Scenario, seconds: number): Promise<Slice> => {
    const measured = results.get(scenario.id);
    if (!measured) throw new Error(`${scenario.id} is not in this run`);
    const slice = await measure(scenario, seconds, measured.slices.length === 0);
    measured.slices.push(slice);
    last = { id: scenario.id, slice };
    return slice;
  };
  for (const scenario of scenarios) {
    if (!scenario.baseline) {
      if (!baselines.has(scenario.id)) await take(scenario, plan.slices * plan.sliceSeconds);
      continue;
    }
    const baseline = scenarios.find((s) => s.id === scenario.baseline);
    if (!baseline) throw new Error(`${scenario.id}: baseline ${scenario.baseline} is not in this run`);
    let before = last?.id === baseline.id ? last.slice : await take(baseline, plan.sliceSeconds);
    const pairs = results.get(scenario.id)?.pairs ?? [];
    for (let i = 0; i < plan.slices; i++) {
      const own = await take(scenario, plan.sliceSeconds);
      const after = await take(baseline, plan.sliceSeconds);
      const baselineCpuUs = before.serverCpuUs === null || after.serverCpuUs === null ? null : (before.serverCpuUs + after.serverCpuUs) / 2;
      pairs.push({ rps: own.rps, baselineRps: (before.rps + after.rps) / 2, cpuUs: own.serverCpuUs, baselineCpuUs });
      before = after;
    }
  }
  return results;
}
