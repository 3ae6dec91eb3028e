import type { Registry } from 'prom-client';
import type { TestApp } from './app.js';

/** A registry's samples at one moment: name (histograms by their `_count`), labels, value. */
export type Sample = { readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number };

export function registryOf(t: TestApp): Registry {
  const { metrics } = t.services;
  if (!metrics) throw new Error('metrics are off in this app: set METRICS_ADDR');
  return metrics;
}

/** Every sample of the registry's `rz_` series; a histogram is represented by its count. */
export async function samples(registry: Registry): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!metric.name.startsWith('rz_')) continue;
    for (const v of metric.values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>) {
      if (v.metricName !== undefined && v.metricName !== `${metric.name}_count`) continue;
      out.push({ name: metric.name, labels: Object.fromEntries(Object.entries(v.labels).map(([k, x]) => [k, String(x)])), value: v.value });
    }
  }
  return out;
}

/** The sum of `name`'s samples whose labels include `labels`. */
export function total(all: readonly Sample[], name: string, labels: Readonly<Record<string, string>> = {}): number {
  return all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}
