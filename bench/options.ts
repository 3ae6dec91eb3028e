import { parseArgs } from 'node:util';
import { MODES, type Mode } from './env.js';
import type { LoadShape } from './scenarios.js';
import { SCENARIOS } from './scenarios.js';

export interface Options extends LoadShape {
  readonly smoke: boolean;
  /** Run the harness and the servers at nice -10, ahead of whatever else the machine runs. */
  readonly highPriority: boolean;
  readonly mode: Mode;
  readonly rounds: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
  /** Slices a bracketed scenario's seconds are measured in, alternating with the ceiling. */
  readonly slices: number;
  /** Scenario ids to run; the ceiling always runs. */
  readonly only: readonly string[] | null;
}

export const USAGE = `Usage: npm run bench [-- options]

  --smoke             1 s warm-up, 2 s per scenario, 1 round (what CI runs)
  --mode M            sqlite (default) or postgres
  --high-priority     run the harness and the servers at nice -10 (needs root or CAP_SYS_NICE):
                      steadier figures on a shared machine, at the expense of everything else on it
  --rounds N          measured rounds per scenario (default 3)
  --duration S        seconds per round (default 10)
  --warmup S          warm-up seconds before each round (default 3)
  --slices N          measure each GET /api/me scenario in N slices per round, each between two
                      slices of the ceiling (default 5: 2 s each; 1 with --smoke)
  --connections N     connections of the hot-path loads (default 50)
  --login-connections N   connections of a login load (default 16)
  --probe-connections N   connections of the GET /api/me latency probe (default 2)
  --only a,b          only these scenarios (and the ceiling): ${SCENARIOS.map((s) => s.id).join(', ')}`;

/** Raised for a bad command line; the message is shown with {@link USAGE}. */
export class UsageError extends Error {}

function count(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${value}"`);
  return n;
}

/** The raw flags; parseArgs errors become usage errors. */
function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        smoke: { type: 'boolean', default: false },
        'high-priority': { type: 'boolean', default: false },
        mode: { type: 'string', default: 'sqlite' },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        slices: { type: 'string' },
        connections: { type: 'string' },
        'login-connections': { type: 'string' },
        'probe-connections': { type: 'string' },
        only: { type: 'string' },
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
  const seconds = count(values.duration, 'duration', smoke ? 2 : 10, 1);
  const slices = count(values.slices, 'slices', smoke ? 1 : 5, 1);
  if (slices > seconds) throw new UsageError(`--slices must not exceed --duration (a slice of less than a second says little), got ${slices} and ${seconds}`);
  return {
    smoke,
    highPriority: values['high-priority'],
    mode,
    rounds: count(values.rounds, 'rounds', smoke ? 1 : 3, 1),
    seconds,
    slices,
    warmupSeconds: count(values.warmup, 'warmup', smoke ? 1 : 3, 0),
    connections: count(values.connections, 'connections', 50, 1),
    loginConnections: count(values['login-connections'], 'login-connections', 16, 1),
    probeConnections: count(values['probe-connections'], 'probe-connections', 2, 1),
    only,
  };
}
