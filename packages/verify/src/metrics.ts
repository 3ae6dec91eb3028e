import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * A prom-client `Registry`, typed by the two methods used, so that prom-client stays an optional
 * peer dependency: a service that passes no registry needs none installed.
 */
export interface MetricsRegistry {
  registerMetric(metric: never): void;
  getSingleMetric(name: string): unknown;
}

/** What verify() answered: `ok`, or the code of its refusal (never `insufficient_scope` nor `insufficient_user_authentication`, which requireScopes and requireAuth decide). */
export type VerifyOutcome = 'ok' | 'unauthorized' | 'invalid_request' | 'invalid_token' | 'unavailable' | 'service_credential_refused' | 'rate_limited';

const OUTCOMES: readonly VerifyOutcome[] = ['ok', 'unauthorized', 'invalid_request', 'invalid_token', 'unavailable', 'service_credential_refused', 'rate_limited'];

/**
 * rz-auth's own buckets (1 ms to 5 s, 100 ms among them), so that the two halves of a revocation
 * compare; they also span an introspection, up to the default timeout.
 */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

function promClient(): typeof PromClient {
  try {
    // Loaded only when a registry is given, from where the service installed it (the peer dependency).
    return createRequire(import.meta.url)('prom-client') as typeof PromClient;
  } catch (error) {
    throw new TypeError('createVerifier: metrics needs the prom-client package installed beside @rz-auth/verify', { cause: error });
  }
}

function isRegistry(value: unknown): value is MetricsRegistry {
  const candidate = value as Partial<MetricsRegistry> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.registerMetric === 'function' && typeof candidate.getSingleMetric === 'function';
}

/**
 * The service-side half of rz-auth's metrics (docs/revocation-metrics.md), registered in the
 * service's registry. Several verifiers given the same registry share the series: the counters
 * and histograms add up, and the gauge counts the streams that are up.
 */
export class VerifyMetrics {
  private readonly requests: Counter<'outcome'>;
  private readonly cacheHits: Counter;
  private readonly introspection: Histogram;
  private readonly connected: Gauge;
  private readonly propagation: Histogram;

  private constructor(registry: MetricsRegistry) {
    const client = promClient();
    const registers = [registry as unknown as Registry];
    // A series already there (another verifier's) is shared, not registered twice (prom-client refuses that).
    const shared = <M>(name: string, make: () => M): M => (registry.getSingleMetric(name) as M | undefined) ?? make();
    this.requests = shared('rz_verify_requests_total', () => {
      const counter = new client.Counter({ name: 'rz_verify_requests_total', help: 'Tokens checked by verify(), by outcome.', labelNames: ['outcome'], registers });
      for (const outcome of OUTCOMES) counter.inc({ outcome }, 0);
      return counter;
    });
    this.cacheHits = shared('rz_verify_cache_hits_total', () => new client.Counter({ name: 'rz_verify_cache_hits_total', help: 'verify() answers taken from the cache, without asking rz-auth.', registers }));
    this.introspection = shared('rz_verify_introspection_duration_seconds', () => new client.Histogram({ name: 'rz_verify_introspection_duration_seconds', help: 'Introspections of tokens at rz-auth, however they ended.', buckets: BUCKETS, registers }));
    this.connected = shared('rz_verify_stream_connected', () => new client.Gauge({ name: 'rz_verify_stream_connected', help: "1 while rz-auth's event stream is up (with several verifiers, how many are).", registers }));
    this.propagation = shared('rz_verify_revocation_propagation_seconds', () =>
      new client.Histogram({ name: 'rz_verify_revocation_propagation_seconds', help: "From a revocation's commit at rz-auth to the moment this service refuses the token.", buckets: BUCKETS, registers }),
    );
  }

  /** The metrics of a verifier given `metrics`, or null without: then no work is done for them. */
  static of(registry: unknown): VerifyMetrics | null {
    if (registry === undefined) return null;
    if (!isRegistry(registry)) throw new TypeError('createVerifier: metrics must be a prom-client Registry');
    return new VerifyMetrics(registry);
  }

  request(outcome: VerifyOutcome): void {
    this.requests.inc({ outcome });
  }

  cacheHit(): void {
    this.cacheHits.inc();
  }

  /** Starts timing an introspection; the returned function ends it. */
  introspecting(): () => void {
    return this.introspection.startTimer();
  }

  stream(up: boolean): void {
    if (up) this.connected.inc();
    else this.connected.dec();
  }

  /** A revocation the cache has applied, committed at `committedAt` (ms since the epoch, rz-auth's clock). */
  revoked(committedAt: number): void {
    // Never below zero: the two hosts' clocks may disagree by a little.
    this.propagation.observe(Math.max(0, Date.now() - committedAt) / 1000);
  }
}
