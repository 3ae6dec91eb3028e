import type { Registry } from 'prom-client';
import { freePort } from './server-process.js';

/** METRICS_ADDR on a loopback port nobody uses, so that metrics are on (and a listener, if started, can bind). */
export const metricsEnv = async (): Promise<Record<string, string>> => ({ METRICS_ADDR: `127.0.0.1:${await freePort()}` });

/** Reads a registry of prom-client's shape (the server's, or one a verifier registered into). */
interface RegistryLike {
  getSingleMetric(name: string): { get(): Promise<{ values: ReadonlyArray<{ value: number; labels: object; metricName?: string }> }> } | undefined;
}

/** How many samples a histogram holds (its `_count`), 0 when it has none yet. */
export async function samples(registry: RegistryLike | Registry | null, name: string): Promise<number> {
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
