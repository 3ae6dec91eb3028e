import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { type MetricsConfig, scrapeAllowed } from './config.js';

/** The listener of METRICS_ADDR (docs/operations.md): `GET /metrics` and nothing else. */
export interface MetricsListener {
  /** `http://host:port`, as bound (a port of 0 in tests gets a free one). */
  readonly url: string;
  close(): Promise<void>;
}

/** A scrape is small and quick: anything slower than this is no scraper. */
const REQUEST_TIMEOUT_MS = 10_000;

const escapeLabel = (value: unknown): string => String(value).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const number = (value: number): string => (Number.isNaN(value) ? 'NaN' : value === Infinity ? '+Inf' : value === -Infinity ? '-Inf' : String(value));

/** A turn of the event loop: requests waiting behind a scrape are served between its families. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/**
 * How long a scrape formats families before it lets waiting requests in: well under the 5 ms it
 * may hold the loop, and few turns per scrape, since under load each turn waits behind every
 * request that arrived meanwhile.
 */
const SLICE_MS = 2;

/** One family in OpenMetrics 1.0 text, from its public JSON. */
function openMetricsFamily(metric: Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number]): string {
  const family = String(metric.type) === 'counter' ? metric.name.replace(/_total$/, '') : metric.name;
  const lines = [`# TYPE ${family} ${metric.type}`, `# HELP ${family} ${metric.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`];
  for (const sample of metric.values as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>) {
    const labels = Object.entries(sample.labels).map(([k, v]) => `${k}="${escapeLabel(typeof v === 'number' ? number(v) : v)}"`);
    const name = sample.metricName ?? (String(metric.type) === 'counter' ? `${family}_total` : family);
    lines.push(`${name}${labels.length > 0 ? `{${labels.join(',')}}` : ''} ${number(sample.value)}`);
  }
  return lines.join('\n');
}

/**
 * The registry's series as a scraper asked for them, a family at a time with a turn of the event
 * loop every {@link SLICE_MS} (prom-client's `metrics()` formats them all in one stretch). OpenMetrics is written
 * from the public JSON: prom-client's own OpenMetrics output renames each counter in place (the
 * family name loses `_total`), which would change the Prometheus text of every later scrape.
 */
export async function scrapeText(registry: Registry, openMetrics: boolean): Promise<string> {
  const families: string[] = [];
  let sliceStart = performance.now();
  for (const { name } of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(name);
    if (metric) families.push(openMetrics ? openMetricsFamily(await metric.get()) : await registry.getSingleMetricAsString(name));
    if (performance.now() - sliceStart > SLICE_MS) {
      await turn();
      sliceStart = performance.now();
    }
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}

/** Whether the scraper asks for OpenMetrics (Prometheus does when it can), by `Accept`. */
const wantsOpenMetrics = (accept: string | undefined): boolean => accept !== undefined && accept.includes('application/openmetrics-text');

function answer(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', ...headers });
  res.end(body);
}

async function scrape(config: MetricsConfig, registry: Registry, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?', 1)[0];
  if (path !== '/metrics') return answer(res, 404, 'Not found. Metrics are at GET /metrics.\n');
  if (req.method !== 'GET') return answer(res, 405, 'Only GET.\n', { allow: 'GET' });
  // Constant-time comparison (config.ts): the token must not be guessable byte by byte.
  if (!scrapeAllowed(config, req.headers.authorization)) return answer(res, 401, 'A bearer token is required.\n', { 'www-authenticate': 'Bearer realm="metrics"' });
  const open = wantsOpenMetrics(req.headers.accept);
  const body = await scrapeText(registry, open);
  answer(res, 200, body, { 'content-type': open ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE });
}

/** Starts the metrics listener; rejects when its address cannot be bound (the server then does not start). */
export async function startMetricsListener(config: MetricsConfig, registry: Registry): Promise<MetricsListener> {
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    scrape(config, registry, req, res).catch(() => {
      // A series that failed to collect: no driver message goes out, the scraper sees the scrape failed.
      if (!res.headersSent) answer(res, 500, 'The metrics could not be collected.\n');
      else res.destroy();
    });
  });
  server.listen(config.port, config.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error))]);
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  return {
    url,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}
