import type { Registry } from 'prom-client';
import { freePort } from './server-process.js';
import type { TestApp } from './app.js';

/** METRICS_ADDR on a loopback port nobody uses, so that metrics are on (and a listener, if started, can bind). */
export const metricsEnv = async (): Promise<Record<string, string>> => ({ METRICS_ADDR: `127.0.0.1:${await freePort()}` });

/** Reads a registry of prom-client's shape (the server's, or one a verifier registered into). */
interface RegistryLike {
  getSingleMetric(name: string): { get(): Promise<{ values: ReadonlyArray<{ value: number; labels: object; metricName?: string }> }> } | undefined;
}

/** How many samples a histogram holds (its `_count`), 0 when it has none yet. */
export async function sampleCount(registry: RegistryLike | Registry | null, name: string): Promise<number> {
  const metric = (registry as RegistryLike | null)?.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values.find((v) => v.metricName === `${name}_count`)?.value ?? 0;
}

/** The value of a counter or gauge series with exactly `labels`. */
export async function valueOf(registry: RegistryLike | Registry | null, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (registry as RegistryLike | null)?.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return values.find((v) => JSON.stringify(Object.entries(v.labels).sort()) === wanted)?.value ?? 0;
}

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
