import { setTimeout as sleep } from 'node:timers/promises';
import { assertHealthy, type LoadGenerator, type LoadResult, runLoad, startLoad } from './load.js';
import { peakRssMb, processCpuSeconds, resetPeakRss } from './procfs.js';
import type { LoadShape, Scenario } from './scenarios.js';
import type { LoadSpec } from './load.js';
import { hasExited, mailSinkOf, metricsUrlOf, type Servers } from './servers.js';
import { type MailFeed, mailsAccepted } from './mail.js';
import type { SecondFactorLogins } from './mfa.js';
import type { PasskeyLogins } from './passkey.js';
import type { Credentials } from './setup.js';
import { deliveryChildOf } from '../test/helpers/processes.js';

/** One measured stretch of one scenario. */
export interface Slice extends LoadResult {
  /** The server's CPU time over the wall time, every thread: 1 is one core fully busy. */
  readonly serverCores: number | null;
  /** The server's CPU time (user + system, every thread) per 2xx answer, in µs: steadier than req/s on a shared machine. */
  readonly serverCpuUs: number | null;
  /** The same for this process, the load generator: near 1 it, not the server, sets the pace. */
  readonly loadGeneratorCores: number;
  /** The server's peak resident memory from the start of the slice (warm-up included) to its end. */
  readonly peakRssMb: number | null;
  /** 2xx per second of the background load (logins during a flood). */
  readonly backgroundRps?: number;
  /** With mail: the delivery child's CPU time (`rz-auth mail deliver`, MAIL_WORKER=process) and the mails accepted meanwhile. */
  readonly delivery?: { readonly cpuSeconds: number; readonly mails: number };
}

export interface MeasureContext {
  readonly servers: Servers;
  readonly credentials: Credentials;
  readonly shape: LoadShape;
  readonly warmupSeconds: number;
  readonly generator: LoadGenerator;
  /** Starts queueing mails at a rate into the store's outbox (scenarios with `mailFeed`). */
  readonly mailFeed?: (perSecond: number) => Promise<MailFeed>;
  /** Bodies for the scenarios with `secondFactorLogins`. */
  readonly secondFactorLogins?: SecondFactorLogins;
  /** Bodies for the scenarios with `passkeyLogins`. */
  readonly passkeyLogins?: PasskeyLogins;
}

/** A background load runs this long before a slice without a warm-up, so the slice sees it at full strength. */
const LEAD_IN_MS = 1000;

const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * Measures one slice: the background load (if any) starts first and runs throughout; the first
 * slice of a scenario is preceded by a warm-up of its own load, unrecorded (JIT, caches, connection
 * set-up). Afterwards it waits for the server to go idle. Throws if the server died or a load was
 * mostly errors.
 */
export async function measureSlice(ctx: MeasureContext, scenario: Scenario, seconds: number, first: boolean): Promise<Slice> {
  const server = ctx.servers.get(scenario.server);
  const pid = server?.child.pid;
  if (!server || pid === undefined) throw new Error(`${scenario.server} is not running`);
  const base = scenario.load(ctx.credentials, ctx.shape);
  // Made just before each run: every body works once, its code or challenge for 30 s at least.
  const specFor = async (runSeconds: number): Promise<LoadSpec> => {
    if (!scenario.secondFactorLogins && !scenario.passkeyLogins) return base;
    const source = scenario.secondFactorLogins ? ctx.secondFactorLogins : ctx.passkeyLogins;
    if (!source) throw new Error(`${scenario.id} needs the bodies of ${scenario.secondFactorLogins ? 'bench/mfa.ts' : 'bench/passkey.ts'}`);
    return { ...base, bodies: await source.bodies(scenario.id, runSeconds) };
  };
  const backgroundSpec = scenario.background?.(ctx.credentials, ctx.shape);
  const urlOf = (load: LoadSpec): string => (load.listener === 'metrics' ? metricsUrlOf(server) : server.url);
  const url = urlOf(base);
  resetPeakRss(pid);
  const background = backgroundSpec && startLoad(ctx.generator, urlOf(backgroundSpec), backgroundSpec, ctx.warmupSeconds + seconds + 60);
  const mails = scenario.mailFeed === undefined ? undefined : await ctx.mailFeed?.(scenario.mailFeed);
  try {
    if (first && ctx.warmupSeconds > 0) assertHealthy(`${scenario.id} warm-up`, await runLoad(ctx.generator, url, await specFor(ctx.warmupSeconds), ctx.warmupSeconds));
    else if (background || mails) await sleep(LEAD_IN_MS);
    const spec = await specFor(seconds);
    // The server's CPU is the API process's alone; the child's is measured beside it, per mail.
    const deliverer = mails ? await deliveryChildOf(pid, 5000) : null;
    const sentBefore = mails ? await mailsAccepted(mailSinkOf(server)) : 0;
    const startedAt = performance.now();
    const [serverBefore, selfBefore, childBefore] = [processCpuSeconds(pid), cpuSeconds(), deliverer === null ? null : processCpuSeconds(deliverer)];
    const result = await runLoad(ctx.generator, url, spec, seconds);
    const [serverAfter, selfAfter, childAfter] = [processCpuSeconds(pid), cpuSeconds(), deliverer === null ? null : processCpuSeconds(deliverer)];
    const wall = (performance.now() - startedAt) / 1000;
    const sent = mails ? (await mailsAccepted(mailSinkOf(server))) - sentBefore : 0;
    const mailRate = mails ? sent / wall : undefined;
    const delivery = childBefore === null || childAfter === null ? undefined : { cpuSeconds: childAfter - childBefore, mails: sent };
    await mails?.stop();
    assertHealthy(scenario.id, result);
    background?.stop();
    const flood = await background?.result;
    if (flood) assertHealthy(`${scenario.id} background load`, flood);
    if (hasExited(server)) throw new Error(`${scenario.server} exited during ${scenario.id}:\n${server.output().slice(-4000)}`);
    const serverCpu = serverBefore === null || serverAfter === null ? null : serverAfter - serverBefore;
    const slice: Slice = {
      ...result,
      serverCores: serverCpu === null ? null : serverCpu / wall,
      serverCpuUs: serverCpu === null || result.ok === 0 ? null : (serverCpu * 1e6) / result.ok,
      loadGeneratorCores: (result.loadGeneratorCpuSeconds ?? selfAfter - selfBefore) / wall,
      peakRssMb: peakRssMb(pid),
      ...(flood ? { backgroundRps: flood.rps } : mailRate === undefined ? {} : { backgroundRps: mailRate }),
      ...(delivery ? { delivery } : {}),
    };
    await settle(pid);
    return slice;
  } finally {
    background?.stop();
    await mails?.stop().catch(() => {});
  }
}

/**
 * Waits until the server is idle (a login flood leaves queued hashes behind), so what one slice
 * left is not measured in the next, whichever server that is. Gives up after 15 s.
 */
async function settle(pid: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const a = processCpuSeconds(pid);
    await sleep(250);
    const b = processCpuSeconds(pid);
    if (a === null || b === null || (b - a) / 0.25 < 0.05) return;
  }
}
