import { parseArgs } from 'node:util';
import { MODES, type Mode } from './env.js';
import type { LoadGenerator } from './load.js';
import type { Plan } from './schedule.js';
import { type LoadShape, SCENARIOS } from './scenarios.js';

export interface Options extends LoadShape, Plan {
  readonly smoke: boolean;
  readonly mode: Mode;
  /** Unrecorded load before a scenario's first slice. */
  readonly warmupSeconds: number;
  /** Scenario ids to run (their baselines run too); null for all. */
  readonly only: readonly string[] | null;
  /** null: wrk where installed, autocannon otherwise. */
  readonly loadGenerator: LoadGenerator | null;
}

export const USAGE = `Usage: npm run bench [-- options]

  --smoke                 1 slice of 2 s per scenario after a 1 s warm-up: proves it works (CI)
  --mode M                sqlite (default) or postgres (PostgreSQL + Redis)
  --slices N              slices per scenario, each between two slices of its baseline (default 10)
  --slice-seconds S       seconds per slice (default 2)
  --warmup S              warm-up seconds before a scenario's first slice (default 3)
  --connections N         connections of the hot-path loads (default 50)
  --login-connections N   connections of a login load (default 16)
  --probe-connections N   connections of the latency probe (default 2)
  --load-generator G      wrk (default where installed) or autocannon
  --only a,b              only these scenarios and their baselines: ${SCENARIOS.map((s) => s.id).join(', ')}`;

/** A bad command line; the message is shown with {@link USAGE} (an empty one: --help). */
export class UsageError extends Error {}

function count(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}"`);
  return n;
}

function parseFlags(argv: readonly string[]) {
  const text = { type: 'string' } as const;
  try {
    return parseArgs({
      args: [...argv],
      options: {
        smoke: { type: 'boolean', default: false },
        mode: { type: 'string', default: 'sqlite' },
        slices: text,
        'slice-seconds': text,
        warmup: text,
        connections: text,
        'login-connections': text,
        'probe-connections': text,
        only: text,
        'load-generator': text,
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Parses the command line; --smoke changes the defaults, explicit flags still win. */
export function parseOptions(argv: readonly string[]): Options {
  const values = parseFlags(argv);
  if (values.help) throw new UsageError('');
  const mode = MODES.find((m) => m === values.mode);
  if (!mode) throw new UsageError(`--mode must be one of ${MODES.join(', ')}, got "${values.mode}"`);
  const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean) ?? null;
  const unknown = only?.filter((id) => !SCENARIOS.some((s) => s.id === id)) ?? [];
  if (unknown.length > 0) throw new UsageError(`--only: unknown scenario ${unknown.join(', ')}`);
  const smoke = values.smoke;
  const generator = values['load-generator'];
  if (generator !== undefined && generator !== 'wrk' && generator !== 'autocannon') throw new UsageError(`--load-generator must be wrk or autocannon, got "${generator}"`);
  return {
    smoke,
    mode,
    slices: count(values.slices, 'slices', smoke ? 1 : 10, 1),
    sliceSeconds: count(values['slice-seconds'], 'slice-seconds', 2, 1),
    warmupSeconds: count(values.warmup, 'warmup', smoke ? 1 : 3, 0),
    connections: count(values.connections, 'connections', 50, 1),
    loginConnections: count(values['login-connections'], 'login-connections', 16, 1),
    probeConnections: count(values['probe-connections'], 'probe-connections', 2, 1),
    only,
    loadGenerator: generator ?? null,
  };
}
