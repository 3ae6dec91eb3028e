import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's Prometheus registry when METRICS_ADDR is set, otherwise null: with metrics off no
 * series is kept and no instrumented path does any work (docs/operations.md). Each concern makes
 * its own series from it (`src/observability/metrics/*.ts`), with labels from closed sets only.
 */
export type Metrics = Registry;

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
