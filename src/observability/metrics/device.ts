import { Counter, type Registry } from 'prom-client';

export type DeviceOutcome = 'requested' | 'approved' | 'denied' | 'expired' | 'redeemed';

/** `rz_device_requests_total{outcome}` and `rz_device_lookup_failures_total` (docs/operations.md). */
export interface DeviceCounts {
  request(outcome: DeviceOutcome): void;
  /** A user code looked up and not found: a spike means someone is guessing codes. */
  lookupFailed(): void;
}

const made = new WeakMap<Registry, DeviceCounts>();

/** The device flow's series of `registry`, made once (a metric name registers once per registry). */
export function deviceCounts(registry: Registry): DeviceCounts {
  let counts = made.get(registry);
  if (!counts) {
    const requests = new Counter({ name: 'rz_device_requests_total', help: 'Device authorization requests, by outcome.', labelNames: ['outcome'], registers: [registry] });
    const failures = new Counter({ name: 'rz_device_lookup_failures_total', help: 'User code lookups that found no pending request.', registers: [registry] });
    counts = { request: (outcome) => requests.labels(outcome).inc(), lookupFailed: () => failures.inc() };
    made.set(registry, counts);
  }
  return counts;
}
