import { Counter, Histogram, type Registry } from 'prom-client';
import { type HotCount, HotCounter } from './hot.js';

/** Who presented the credential: `derived` for an `rzd_` child, `none` when no credential was recognised. */
export type DecisionType = 'user' | 'api_token' | 'app_token' | 'derived' | 'service' | 'none';
export type DecisionOutcome = 'ok' | 'invalid_token' | 'insufficient_scope' | 'insufficient_user_authentication' | 'rate_limited' | 'network_refused';

/** `rz_auth_decisions_total`: one per request a guarded route answers, or refuses, in its guard. */
export class AuthDecisions {
  private readonly counter: HotCounter;
  /** The children, resolved on first use: the request path builds no label object. */
  private readonly children = new Map<DecisionType, Map<DecisionOutcome, HotCount>>();

  constructor(registry: Registry) {
    this.counter = new HotCounter(registry, 'rz_auth_decisions_total', 'Authentication and authorization decisions on guarded routes, by credential type and outcome.', ['token_type', 'outcome']);
  }

  decided(type: DecisionType, outcome: DecisionOutcome): void {
    let byOutcome = this.children.get(type);
    if (!byOutcome) this.children.set(type, (byOutcome = new Map()));
    let child = byOutcome.get(outcome);
    if (!child) byOutcome.set(outcome, (child = this.counter.child({ token_type: type, outcome })));
    child.inc();
  }
}

/** Durations of introspection answers: a cache hit is well under a millisecond, a store lookup a few. */
const INTROSPECTION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** `rz_introspections_total{service,active}` and `rz_introspection_duration_seconds`. */
export class IntrospectionMetrics {
  private readonly answers: Counter;
  private readonly duration: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.answers = new Counter({ name: 'rz_introspections_total', help: 'Introspection answers, by service credential name and whether the token was active.', labelNames: ['service', 'active'], registers });
    this.duration = new Histogram({ name: 'rz_introspection_duration_seconds', help: 'Time to answer an introspection.', buckets: INTROSPECTION_BUCKETS, registers });
  }

  /** `service` is the credential's name, from the operator's own list of credentials (a bounded set). */
  answered(service: string, active: boolean, seconds: number): void {
    this.answers.labels(service, active ? 'true' : 'false').inc();
    this.duration.observe(seconds);
  }
}
