import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';

/** One stream of requests against one server. */
export interface LoadSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Closed loop: each connection sends its next request as soon as the answer to the last arrives. */
  readonly connections: number;
}

export interface LoadResult {
  /** 2xx responses per second. */
  readonly rps: number;
  /** Latency of 2xx responses, in milliseconds with microsecond resolution. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly responses: number;
  /** Non-2xx responses, socket errors and timeouts. */
  readonly failures: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly seconds: number;
}

export interface RunningLoad {
  /** Ends the load early (a background flood); the result resolves shortly after. */
  stop(): void;
  readonly result: Promise<LoadResult>;
}

/**
 * Starts autocannon in this process (never in a server's process). Latencies are recorded in a
 * microsecond histogram of our own: autocannon's own histogram has a resolution of 1 ms, too coarse
 * for a median well under a millisecond.
 */
export function startLoad(baseUrl: string, spec: LoadSpec, seconds: number): RunningLoad {
  return launch(baseUrl, spec, { duration: seconds });
}

/** Sends exactly `amount` requests, closed loop over the spec's connections, and waits for every answer. */
export function runRequests(baseUrl: string, spec: LoadSpec, amount: number): Promise<LoadResult> {
  return launch(baseUrl, spec, { amount }).result;
}

function launch(baseUrl: string, spec: LoadSpec, limit: { duration: number } | { amount: number }): RunningLoad {
  const headers: Record<string, string> = {};
  if (spec.token !== undefined) headers.authorization = `Bearer ${spec.token}`;
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  const instance = autocannon({
    url: `${baseUrl}${spec.path}`,
    method: spec.method,
    headers,
    ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
    connections: spec.connections,
    pipelining: 1,
    ...limit,
    // A server under valgrind (the instruction count) is some fifty times slower.
    timeout: 'amount' in limit ? 120 : 10,
  });
  const histogram = createHistogram();
  instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
    if (statusCode >= 200 && statusCode < 300) histogram.record(Math.max(1, Math.round(responseTimeMs * 1000)));
  });
  const result = Promise.resolve(instance).then((r): LoadResult => {
    const ok = r['2xx'];
    const failures = r.non2xx + r.errors + r.timeouts;
    const ms = (us: number) => (ok === 0 ? 0 : Math.round(us) / 1000);
    return {
      rps: r.duration > 0 ? ok / r.duration : 0,
      p50Ms: ms(histogram.percentile(50)),
      p99Ms: ms(histogram.percentile(99)),
      maxMs: ms(histogram.max),
      responses: ok + r.non2xx,
      failures,
      statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, { count }]) => [code, count])),
      seconds: r.duration,
    };
  });
  return { stop: () => instance.stop(), result };
}

/** Runs a load to completion. */
export function runLoad(baseUrl: string, spec: LoadSpec, seconds: number): Promise<LoadResult> {
  return startLoad(baseUrl, spec, seconds).result;
}

/**
 * Throws when a run is mostly errors, e.g. a rate limit kicked in or the server fell over: its
 * figures would measure how fast rz-auth says no. A handful of failures is tolerated.
 */
export function assertHealthy(label: string, result: LoadResult): void {
  const allowed = Math.max(5, result.responses * 0.01);
  if (result.responses > 0 && result.failures <= allowed) return;
  const codes = Object.entries(result.statusCodes).map(([code, n]) => `${code}: ${n}`).join(', ');
  throw new Error(`${label}: ${result.failures} failed of ${result.responses} responses (status codes ${codes || 'none'}); figures would be meaningless`);
}
