import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { startWrk } from './wrk.js';

/** One stream of requests against one server. */
export interface LoadSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  /**
   * JSON bodies sent one per request, in order, instead of `body`: for requests that each work once
   * (bench/mfa.ts). Past the last one the list starts again, and rz-auth's refusals fail the run.
   */
  readonly bodies?: readonly string[];
  /** Sent as a form (application/x-www-form-urlencoded), instead of a JSON body. */
  readonly form?: Readonly<Record<string, string>>;
  /** Closed loop: each connection sends its next request as soon as the answer to the last arrives. */
  readonly connections: number;
  /** Sent to the server's metrics listener (METRICS_ADDR) instead of its API port. */
  readonly listener?: 'metrics';
  /**
   * The answer the load is meant to get when it is not a 2xx: a device code's poll while it is
   * pending is a 400 by RFC 8628. Those answers count as the successes, anything else as failures.
   */
  readonly expectedStatus?: 400;
}

export interface LoadResult {
  /** 2xx responses per second. */
  readonly rps: number;
  /** 2xx responses (wrk: answers below 400). */
  readonly ok: number;
  /** Latency of 2xx responses, in microseconds; merged across slices for a row's percentiles. */
  readonly latencyUs: RecordableHistogram;
  readonly responses: number;
  /** Non-2xx responses, socket errors and timeouts. */
  readonly failures: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly seconds: number;
  /** The load generator's CPU time, when it runs as a process of its own (wrk); else measured around it. */
  readonly loadGeneratorCpuSeconds?: number;
}

/** wrk where installed, autocannon otherwise (`--load-generator` chooses). */
export type LoadGenerator = 'wrk' | 'autocannon';

export interface RunningLoad {
  /** Ends the load early (a background flood); the result resolves shortly after. */
  stop(): void;
  readonly result: Promise<LoadResult>;
}

/** Starts a load with the chosen generator. */
export function startLoad(generator: LoadGenerator, baseUrl: string, spec: LoadSpec, seconds: number): RunningLoad {
  return generator === 'wrk' ? startWrk(baseUrl, spec, seconds) : startAutocannon(baseUrl, spec, seconds);
}

/**
 * Starts autocannon in this process, never in a server's. Latencies go into a microsecond histogram
 * of our own: autocannon's has a resolution of 1 ms, too coarse for medians well under a millisecond.
 */
export function startAutocannon(baseUrl: string, spec: LoadSpec, seconds: number): RunningLoad {
  const headers: Record<string, string> = {};
  if (spec.token !== undefined) headers.authorization = `Bearer ${spec.token}`;
  if (spec.body !== undefined || spec.bodies !== undefined) headers['content-type'] = 'application/json';
  if (spec.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const body = spec.form !== undefined ? new URLSearchParams(spec.form).toString() : spec.body !== undefined ? JSON.stringify(spec.body) : undefined;
  const { bodies } = spec;
  let sent = 0;
  const instance = autocannon({
    url: `${baseUrl}${spec.path}`,
    method: spec.method,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(bodies === undefined || bodies.length === 0 ? {} : { requests: [{ setupRequest: (request) => ({ ...request, body: bodies[sent++ % bodies.length] }) }] }),
    connections: spec.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
  });
  const latencyUs = createHistogram();
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    const ok = spec.expectedStatus === undefined ? statusCode >= 200 && statusCode < 300 : statusCode === spec.expectedStatus;
    if (ok) latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
  });
  const result = Promise.resolve(instance).then((r): LoadResult => {
    const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, { count }]) => [code, count]));
    const ok = spec.expectedStatus === undefined ? r['2xx'] : (statusCodes[String(spec.expectedStatus)] ?? 0);
    const responses = r['2xx'] + r.non2xx;
    return { rps: r.duration > 0 ? ok / r.duration : 0, ok, latencyUs, responses, failures: responses - ok + r.errors + r.timeouts, statusCodes, seconds: r.duration };
  });
  return { stop: () => instance.stop(), result };
}

/** Runs a load to completion. */
export function runLoad(generator: LoadGenerator, baseUrl: string, spec: LoadSpec, seconds: number): Promise<LoadResult> {
  return startLoad(generator, baseUrl, spec, seconds).result;
}

/**
 * Throws when a load was mostly errors (a rate limit kicked in, the server fell over): its figures
 * would measure how fast rz-auth says no. A handful of failures is tolerated.
 */
export function assertHealthy(label: string, result: LoadResult): void {
  const allowed = Math.max(5, result.responses * 0.01);
  if (result.responses > 0 && result.failures <= allowed) return;
  const codes = Object.entries(result.statusCodes).map(([code, n]) => `${code}: ${n}`).join(', ');
  throw new Error(`${label}: ${result.failures} failed of ${result.responses} responses (status codes ${codes || 'none'}); figures would be meaningless`);
}
