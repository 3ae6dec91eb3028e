import { Counter, type Registry } from 'prom-client';
import type { PolicyName } from '../../ratelimit/policies.js';

/** Reports one request refused by a rate-limit policy. */
export type RejectionCount = (policy: PolicyName | 'child') => void;

/** `rz_ratelimit_rejections_total{policy}`: the policy names are the fixed ones of docs/rate-limits.md, and `child` for derived tokens' `rl` caveats. */
export function rejectionCount(registry: Registry): RejectionCount {
  const counter = new Counter({ name: 'rz_ratelimit_rejections_total', help: 'Requests refused by a rate limit, by policy.', labelNames: ['policy'], registers: [registry] });
  return (policy) => counter.labels(policy).inc();
}
