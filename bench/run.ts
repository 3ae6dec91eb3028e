import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { type CpuLayout, cpusFor, pin, planCpus, raisePriority } from './cpus.js';
import { createStore, rateLimitEnv, rzAuthEnv, type Store } from './env.js';
import { describeMachine, type Machine, machineLine } from './machine.js';
import { joinSlices, measureRound, type RoundResult, settle, type Timing } from './measure.js';
import { type Options, parseOptions, USAGE, UsageError } from './options.js';
import { markdownTable, type ScenarioSummary, summarize, tableRows, textTable } from './report.js';
import { type Scenario, SCENARIOS } from './scenarios.js';
import { ensureBuilt, ROOT, type ServerProcess, startCeiling, startRzAuth } from './servers.js';
import { createCredentials } from './setup.js';

/*
 * `npm run bench`: the cost of authentication, as a ratio to a bare Fastify server measured in the
 * same run. Each round runs the ceiling and then every scenario, so slow drift on a shared machine
 * (another job starting) hits the ceiling and the scenarios alike; the hot-path scenarios are
 * each measured in slices alternating with slices of the ceiling, and each slice is compared with
 * the ceiling slices around it. Exit status: 0 whatever the
 * figures, 1 when something broke (a server did not start or died, a load was mostly errors),
 * 2 for a bad command line.
 */

const RESULTS = join(ROOT, 'bench', 'results');

type Servers = Partial<Record<Scenario['server'], ServerProcess>>;

const fmt = (n: number | null, digits = 2) => (n === null ? 'n/a' : n.toFixed(digits));

function progress(round: number, rounds: number, scenario: Scenario, r: RoundResult): void {
  const cpu = `cpu server ${fmt(r.cpu.server)} (${fmt(r.cpuUsPerRequest, 0)} µs/req) / load gen ${fmt(r.cpu.loadGenerator)} / other ${fmt(r.cpu.other)}`;
  const flood = r.background ? `  (logins ${Math.round(r.background.rps)}/s)` : '';
  console.log(
    `[${round}/${rounds}] ${scenario.id.padEnd(28)} ${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${fmt(r.p50Ms)} ms  p99 ${fmt(r.p99Ms)} ms  ` +
      `RSS ${fmt(r.peakRssMb, 0)} MB  ${cpu}${flood}`,
  );
}

/** Things that make this run's figures less trustworthy, said next to the figures. */
function warnings(summaries: readonly ScenarioSummary[]): string[] {
  const found: string[] = [];
  const ceiling = summaries.find((s) => s.id === 'ceiling');
  const ceilingSlices = summaries.flatMap((s) => s.rounds.flatMap((r) => r.slices ?? []));
  if (ceiling?.rounds.some((r) => r.cpu.loadGenerator >= 0.9) || ceilingSlices.some((s) => s.ceilingLoadGenerator >= 0.9)) {
    found.push("the load generator used ≥ 90% of its CPU during the ceiling: the ceiling may be the load generator's limit, which pushes every ratio towards 1");
  }
  for (const s of summaries) {
    const noisy = s.rounds.filter((r) => (r.cpu.other ?? 0) > 0.25);
    if (noisy.length === 0) continue;
    found.push(`${s.id}: other processes used up to ${fmt(Math.max(...noisy.map((r) => r.cpu.other ?? 0)))} cores in ${noisy.length} of ${s.rounds.length} round(s)`);
  }
  return found;
}

/**
 * Every round: the ceiling, then each scenario, each on its CPUs, waiting for the server to idle in
 * between. A bracketed scenario is measured in slices, alternating with slices of the ceiling:
 * ceiling, slice, ceiling, slice, ..., ceiling (the first ceiling slice may be the previous
 * scenario's last). Each slice is compared with the two ceiling slices around it, measured within
 * a few seconds of it: on a shared machine the ceiling alone moves by a fifth or more within a
 * minute, so the nearer the reference, the less of that movement a ratio carries.
 */
async function measureAll(options: Options, scenarios: readonly Scenario[], servers: Record<Scenario['server'], ServerProcess>, layout: CpuLayout): Promise<Map<string, RoundResult[]>> {
  const credentials = await createCredentials(servers['rz-auth'].url);
  pin(process.pid, layout.loadGenerator);
  if (options.highPriority && ![process.pid, servers.ceiling.pid, servers['rz-auth'].pid].every(raisePriority)) {
    throw new Error('--high-priority: not permitted to raise priority (needs root or CAP_SYS_NICE)');
  }
  const results = new Map<string, RoundResult[]>();
  const ceiling = SCENARIOS.find((s) => s.id === 'ceiling');
  if (!ceiling) throw new Error('no ceiling scenario');
  const add = (id: string, result: RoundResult) => results.set(id, [...(results.get(id) ?? []), result]);
  // A slice is measured without a warm-up of its own but the first: the processes are warm.
  const slice: Timing = { warmupSeconds: 0, seconds: options.seconds / options.slices };
  for (let round = 1; round <= options.rounds; round++) {
    const measure = async (scenario: Scenario, timing: Timing = options): Promise<RoundResult> => {
      const server = servers[scenario.server];
      pin(server.pid, cpusFor(layout, scenario.cpus));
      const result = await measureRound(round, scenario, server, credentials, options, timing);
      progress(round, options.rounds, scenario, result);
      await settle(server);
      return result;
    };
    // The ceiling slice that came last, with nothing measured since.
    let lastCeilingSlice: RoundResult | undefined;
    for (const scenario of scenarios) {
      if (!scenario.bracketed) {
        add(scenario.id, await measure(scenario));
        lastCeilingSlice = undefined;
        continue;
      }
      const ceilings = [lastCeilingSlice ?? (await measure(ceiling, slice))];
      const parts: RoundResult[] = [];
      for (let i = 0; i < options.slices; i++) {
        parts.push(await measure(scenario, i === 0 ? { ...slice, warmupSeconds: options.warmupSeconds } : slice));
        ceilings.push(await measure(ceiling, slice));
      }
      lastCeilingSlice = ceilings.at(-1);
      add(scenario.id, joinSlices(parts, ceilings));
    }
  }
  return results;
}

interface RunInfo {
  readonly options: Options;
  readonly profile: string;
  readonly machine: Machine;
  readonly layout: CpuLayout;
  readonly store: Store;
  readonly seconds: number;
}

/** Prints the table and writes bench/results/<timestamp>.json, latest.json and latest.md. */
function report(summaries: readonly ScenarioSummary[], info: RunInfo): void {
  const rows = tableRows(summaries);
  const notes = warnings(summaries);
  console.log(`\n${textTable(rows)}\n`);
  for (const note of notes) console.log(`note: ${note}`);
  const { options, machine } = info;
  const date = new Date().toISOString();
  const json = {
    date,
    mode: options.mode,
    store: info.store.description,
    profile: {
      smoke: options.smoke,
      highPriority: options.highPriority,
      rounds: options.rounds,
      seconds: options.seconds,
      slices: options.slices,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      loginConnections: options.loginConnections,
      probeConnections: options.probeConnections,
    },
    machine: { ...machine, loadAverageAtEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    pinning: info.layout.description,
    rateLimits: rateLimitEnv(),
    durationSeconds: info.seconds,
    scenarios: summaries,
    warnings: notes,
  };
  const header = `Measured ${date.slice(0, 10)} on ${machineLine(machine)}; ${options.mode}; ${info.profile}; commit ${machine.commit ?? 'unknown'}.`;
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.md'), `${header}\n\n${markdownTable(rows)}\n`);
  console.log(`results: ${file} (also latest.json, latest.md); took ${info.seconds} s`);
}

async function run(options: Options, store: Store, servers: Servers): Promise<void> {
  const started = Date.now();
  const machine = describeMachine();
  const layout = planCpus();
  const scenarios = SCENARIOS.filter((s) => s.id === 'ceiling' || options.only === null || options.only.includes(s.id));
  const profile =
    `${options.smoke ? 'smoke' : 'full'}: ${options.rounds} round(s) × ${options.seconds} s after ${options.warmupSeconds} s warm-up, ` +
    `GET /api/me in ${options.slices} slice(s) between the ceiling's, ` +
    `${options.connections} connections${options.highPriority ? ', nice -10' : ''}`;
  console.log(`rz-auth benchmark (${profile})\nmachine: ${machineLine(machine)}, load average ${machine.loadAverageAtStart}`);
  console.log(`store: ${store.description}\npinning: ${layout.description}`);
  ensureBuilt();
  // Started on every CPU: rz-auth sizes its hash pool from the CPUs it may use at start.
  const [ceiling, rzAuth] = await Promise.allSettled([
    startCeiling().then((s) => (servers.ceiling = s)),
    startRzAuth((port) => rzAuthEnv(store, port)).then((s) => (servers['rz-auth'] = s)),
  ]);
  if (ceiling.status === 'rejected') throw ceiling.reason;
  if (rzAuth.status === 'rejected') throw rzAuth.reason;
  const results = await measureAll(options, scenarios, { ceiling: ceiling.value, 'rz-auth': rzAuth.value }, layout);
  const seconds = Math.round((Date.now() - started) / 1000);
  report(summarize(scenarios, results, machine.cores), { options, profile, machine, layout, store, seconds });
}

async function main(): Promise<number> {
  let options: Options;
  let store: Store;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) console.error(error.message ? `bench: ${error.message}\n\n${USAGE}` : USAGE);
    else throw error;
    return error instanceof UsageError && error.message === '' ? 0 : 2;
  }
  try {
    store = await createStore(options.mode);
  } catch (error) {
    console.error(`bench: cannot create the ${options.mode} store: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const servers: Servers = {};
  const cleanUp = async () => {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await store.dispose();
  };
  // Ctrl-C: stop the servers and remove the store now, not after the load in flight ends.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\nbench: ${signal}, stopping`);
      void cleanUp().finally(() => process.exit(130));
    });
  }
  try {
    await run(options, store, servers);
    return 0;
  } catch (error) {
    console.error(`\nbench: FAILED: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await cleanUp();
  }
}

process.exitCode = await main();
