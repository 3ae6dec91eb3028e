import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { ServerProcess } from '../test/helpers/server-process.js';
import { ROOT } from '../test/helpers/server-process.js';
import { createStore, rateLimitEnv, rzAuthEnv, type Store } from './env.js';
import { describeMachine, type Machine, machineLine } from './machine.js';
import { measureSlice } from './measure.js';
import { type Options, parseOptions, USAGE, UsageError } from './options.js';
import { markdownTable, rssLine, type Summary, summarize, tableRows, textTable, warnings } from './report.js';
import { runScenarios } from './schedule.js';
import { type Scenario, selectScenarios } from './scenarios.js';
import { ensureBuilt, NEEDS_CREDENTIALS, type ServerName, startServers, stopServer } from './servers.js';
import { createCredentials } from './setup.js';
import { startMailFeed } from './mail.js';
import { prepareSecondFactorLogins, type SecondFactorLogins } from './mfa.js';
import { type PasskeyLogins, preparePasskeyLogins } from './passkey.js';
import { wrkVersion } from './wrk.js';

/*
 * `npm run bench`: what authentication costs, each scenario as a ratio to its baseline (the bare
 * Fastify ceiling, unless a scenario names another) measured next to it in the same run; see
 * bench/README.md. Exit status: 0 whatever the figures, 1 when something broke (a server did not
 * start or died, a load was mostly errors), 2 for a bad command line.
 */

const RESULTS = join(ROOT, 'bench', 'results');

const fmt = (n: number | null, digits = 2) => (n === null ? 'n/a' : n.toFixed(digits));

function progress(scenario: Scenario, seconds: number, slice: Awaited<ReturnType<typeof measureSlice>>): void {
  const unit = scenario.mailFeed === undefined ? 'req/s' : 'mails/s sent';
  const child = slice.delivery && slice.delivery.mails > 0 ? ` (delivery child ${fmt((slice.delivery.cpuSeconds * 1e6) / slice.delivery.mails, 0)} µs CPU/mail)` : '';
  const flood = slice.backgroundRps === undefined ? '' : `  background ${Math.round(slice.backgroundRps)} ${unit}${child}`;
  console.log(
    `${scenario.id.padEnd(28)} ${String(seconds).padStart(3)} s ${Math.round(slice.rps).toString().padStart(6)} req/s  ` +
      `${fmt(slice.serverCpuUs, 1).padStart(6)} µs/req  CPU ${fmt(slice.serverCores)} (load generator ${fmt(slice.loadGeneratorCores)})  RSS ${fmt(slice.peakRssMb, 0)} MB${flood}`,
  );
}

/** Prints the table and writes bench/results/<timestamp>.json, latest.json and latest.md. */
function report(scenarios: readonly Scenario[], summaries: readonly Summary[], options: Options, machine: Machine, store: Store, seconds: number): void {
  const rows = tableRows(summaries);
  const notes = warnings(scenarios, summaries);
  const rss = rssLine(summaries);
  console.log(`\n${textTable(rows)}\n`);
  if (rss) console.log(rss);
  for (const note of notes) console.log(`note: ${note}`);
  const date = new Date().toISOString();
  const { only, ...profile } = options;
  const json = {
    date,
    profile: { ...profile, only },
    store: store.description,
    machine: { ...machine, loadAverageAtEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    rateLimits: rateLimitEnv(),
    durationSeconds: seconds,
    scenarios: summaries,
    warnings: notes,
  };
  const what = `${options.smoke ? 'smoke' : 'full'}, ${options.mode}, ${options.slices} slice(s) of ${options.sliceSeconds} s per scenario`;
  const header = `Measured ${date.slice(0, 10)} on ${machineLine(machine)}; ${what}; commit ${machine.commit ?? 'unknown'}.`;
  const notesText = notes.map((n) => `\n\nNote: ${n}.`).join('');
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${date.replace(/[:.]/g, '-')}.json`);
  for (const path of [file, join(RESULTS, 'latest.json')]) writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.md'), `${header}\n\n${markdownTable(rows)}${rss ? `\n\n${rss}.` : ''}${notesText}\n`);
  console.log(`results: ${file} (also latest.json, latest.md); took ${seconds} s`);
}

async function run(options: Options, store: Store, servers: Map<ServerName, ServerProcess>): Promise<void> {
  const started = Date.now();
  const version = wrkVersion();
  const generator = options.loadGenerator ?? (version === null ? 'autocannon' : 'wrk');
  if (generator === 'wrk' && version === null) throw new Error('--load-generator wrk: wrk is not installed');
  const machine = describeMachine({ name: generator, wrkVersion: version });
  const scenarios = selectScenarios(options.only);
  console.log(`rz-auth benchmark: ${scenarios.map((s) => s.id).join(', ')}`);
  console.log(`machine: ${machineLine(machine)}, load average ${machine.loadAverageAtStart}\nstore: ${store.description}`);
  ensureBuilt();
  // rz-auth always runs: it is where the credentials come from, whatever is measured.
  const names = [...new Set<ServerName>(['rz-auth', ...scenarios.map((s) => s.server)])];
  await startServers(names.filter((n) => !NEEDS_CREDENTIALS.has(n)), { store }, servers);
  const rzAuth = servers.get('rz-auth');
  if (!rzAuth) throw new Error('rz-auth is not running');
  const credentials = await createCredentials(rzAuth.url, rzAuthEnv(store));
  await startServers(names.filter((n) => NEEDS_CREDENTIALS.has(n)), { store, rzAuth: { url: rzAuth.url, credentials } }, servers);
  let secondFactorLogins: SecondFactorLogins | undefined;
  if (scenarios.some((s) => s.secondFactorLogins)) {
    const writing = Date.now();
    secondFactorLogins = await prepareSecondFactorLogins(store);
    console.log(`second-factor logins: users with an authenticator app written in ${Math.round((Date.now() - writing) / 1000)} s`);
  }
  const passkeyLogins: PasskeyLogins | undefined = scenarios.some((s) => s.passkeyLogins) ? await preparePasskeyLogins(rzAuth.url, store) : undefined;
  const ctx = { servers, credentials, shape: options, warmupSeconds: options.warmupSeconds, generator, mailFeed: (perSecond: number) => startMailFeed(store, perSecond), secondFactorLogins, passkeyLogins };
  const results = await runScenarios(scenarios, options, async (scenario, seconds, first) => {
    const slice = await measureSlice(ctx, scenario, seconds, first);
    progress(scenario, seconds, slice);
    return slice;
  }).finally(() => Promise.all([secondFactorLogins?.close(), passkeyLogins?.close()]));
  const seconds = Math.round((Date.now() - started) / 1000);
  report(scenarios, summarize(scenarios, results, machine.cores), options, machine, store, seconds);
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(error.message ? `bench: ${error.message}\n\n${USAGE}` : USAGE);
    return error.message === '' ? 0 : 2;
  }
  let store: Store;
  try {
    store = await createStore(options.mode);
  } catch (error) {
    console.error(`bench: cannot create the ${options.mode} store: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const servers = new Map<ServerName, ServerProcess>();
  const cleanUp = async () => {
    await Promise.all([...servers.values()].map(stopServer));
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
