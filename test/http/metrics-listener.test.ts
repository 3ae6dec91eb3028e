import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/lib/env-vars.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { tempDir } from '../helpers/app.js';
import { freePort, runCli, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'scrape-secret-0123456789';

/** One request to the metrics listener (or any URL), with its status, headers and text. */
async function get(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('the metrics listener (METRICS_ADDR)', () => {
  let server: RunningServer;
  let metricsUrl: string;
  const temp = tempDir();

  beforeAll(async () => {
    const port = await freePort();
    const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, LOG_LEVEL: 'silent', RATE_LIMITS: 'off', METRICS_ADDR: `127.0.0.1:${port}`, METRICS_TOKEN: TOKEN });
    server = await startServer(config);
    metricsUrl = server.metricsUrl ?? '';
    expect(metricsUrl).toBe(`http://127.0.0.1:${port}`);
  });
  afterAll(async () => {
    await server.close();
    temp.remove();
  });

  const auth = { authorization: `Bearer ${TOKEN}` };

  it('serves the series in Prometheus text 0.0.4 with the token', async () => {
    await fetch(`${server.url}/api/me`);
    const res = await get(`${metricsUrl}/metrics`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toContain('# TYPE rz_http_requests_total counter');
    expect(res.text).toContain('rz_http_requests_total{route="/api/me",method="GET",status="401"} 1');
    expect(res.text).toContain('# TYPE rz_http_request_duration_seconds histogram');
    expect(res.text).toMatch(/^rz_http_request_duration_seconds_bucket\{route="\/api\/me",method="GET",le="0\.005"\} [01]$/m);
    expect(res.text).toContain('rz_http_request_duration_seconds_bucket{route="/api/me",method="GET",le="+Inf"} 1');
    expect(res.text).toContain('rz_http_request_duration_seconds_count{route="/api/me",method="GET"} 1');
    expect(res.text).toMatch(/^rz_store_up 1$/m);
    expect(res.text).toMatch(/^rz_signing_keys\{state="active"\} 1$/m);
    expect(res.text).toContain('process_cpu_user_seconds_total');
    // Second factors and the device flow are built: their families are there.
    expect(res.text).toContain('# TYPE rz_mfa_verifications_total counter');
    expect(res.text).toContain('# TYPE rz_device_requests_total counter');
  });

  it('serves OpenMetrics when Accept asks for it, and Prometheus text again after', async () => {
    const open = await get(`${metricsUrl}/metrics`, { headers: { ...auth, accept: 'application/openmetrics-text; version=1.0.0,text/plain;q=0.5' } });
    expect(open.status).toBe(200);
    expect(open.headers.get('content-type')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(open.text).toContain('# TYPE rz_http_requests counter');
    expect(open.text).toMatch(/^rz_http_requests_total\{route="\/api\/me",method="GET",status="401"\} \d+$/m);
    expect(open.text).toContain('rz_http_request_duration_seconds_bucket{route="/api/me",method="GET",le="+Inf"} 1');
    expect(open.text.endsWith('# EOF\n')).toBe(true);
    const text = await get(`${metricsUrl}/metrics`, { headers: auth });
    expect(text.text).toContain('# TYPE rz_http_requests_total counter');
  });

  const refusals: Array<[string, string, RequestInit, number, Record<string, string>]> = [
    ['no token', '/metrics', {}, 401, { 'www-authenticate': 'Bearer realm="metrics"' }],
    ['a wrong token', '/metrics', { headers: { authorization: `Bearer ${TOKEN}x` } }, 401, { 'www-authenticate': 'Bearer realm="metrics"' }],
    ['another scheme', '/metrics', { headers: { authorization: `Basic ${TOKEN}` } }, 401, {}],
    ['another path', '/api/me', { headers: auth }, 404, {}],
    ['the root', '/', {}, 404, {}],
    ['a path under /metrics', '/metrics/x', { headers: auth }, 404, {}],
    ['POST', '/metrics', { method: 'POST', headers: auth }, 405, { allow: 'GET' }],
    ['DELETE', '/metrics', { method: 'DELETE', headers: auth }, 405, { allow: 'GET' }],
  ];
  it.each(refusals)('refuses %s', async (_name, path, init, status, headers) => {
    const res = await get(`${metricsUrl}${path}`, init);
    expect(res.status).toBe(status);
    expect(res.text).not.toContain('rz_');
    for (const [name, value] of Object.entries(headers)) expect(res.headers.get(name)).toBe(value);
  });

  it('is not served on the main port', async () => {
    for (const headers of [{}, auth]) {
      const res = await get(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(404);
      expect((JSON.parse(res.text) as { code: string }).code).toBe('not_found');
    }
  });
});

describe('metrics configuration', () => {
  const base = { DATABASE_URL: 'sqlite::memory:' };
  const refused: Array<[string, Record<string, string>]> = [
    ['0.0.0.0 without a token', { METRICS_ADDR: '0.0.0.0:9464' }],
    ['[::] without a token', { METRICS_ADDR: '[::]:9464' }],
    ['a public address with an empty token', { METRICS_ADDR: '10.0.0.5:9464', METRICS_TOKEN: '' }],
    ['no port', { METRICS_ADDR: '127.0.0.1' }],
  ];
  it.each(refused)('refuses %s', (_name, env) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
  });

  it('is off without METRICS_ADDR, and on for loopback without a token', () => {
    expect(loadConfig(base).metrics).toBeNull();
    expect(loadConfig({ ...base, METRICS_ADDR: '127.0.0.1:9464' }).metrics).toEqual({ host: '127.0.0.1', port: 9464, token: null });
    expect(loadConfig({ ...base, METRICS_ADDR: '0.0.0.0:9464', METRICS_TOKEN: TOKEN }).metrics).toEqual({ host: '0.0.0.0', port: 9464, token: TOKEN });
  });

  it('`serve` opens the listener, and a graceful shutdown (SIGTERM) closes it', async () => {
    const temp = tempDir();
    try {
      const port = await freePort();
      const server = await spawnServer({ DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, METRICS_ADDR: `127.0.0.1:${port}`, METRICS_TOKEN: TOKEN });
      const scraped = await get(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('rz_store_up 1');
      expect(await server.stop('SIGTERM')).toBe(0);
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    } finally {
      temp.remove();
    }
  });

  it('refuses to start `serve` on 0.0.0.0 without a token, and with more than one worker', async () => {
    const temp = tempDir();
    try {
      const env = { DATABASE_URL: `sqlite:${join(temp.dir, 'rz.db')}`, PORT: String(await freePort()) };
      const open = await runCli(['serve'], { ...env, METRICS_ADDR: '0.0.0.0:9464' });
      expect(open.code).toBe(2);
      expect(open.stderr).toContain('configuration error: METRICS_ADDR 0.0.0.0:9464 is not a loopback address: set METRICS_TOKEN');
      const workers = await runCli(['serve', '--workers', '2'], { ...env, METRICS_ADDR: `127.0.0.1:${await freePort()}` });
      expect(workers.code).toBe(2);
      expect(workers.stderr).toContain('configuration error: METRICS_ADDR cannot be used with --workers');
    } finally {
      temp.remove();
    }
  });
});
