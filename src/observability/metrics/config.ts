import { timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { ConfigError, type Env, raw } from '../../lib/env-vars.js';

/** The separate listener that serves `GET /metrics` (METRICS_ADDR, METRICS_TOKEN; docs/operations.md). */
export interface MetricsConfig {
  readonly host: string;
  readonly port: number;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  readonly token: string | null;
}

/** `host:port`, `[v6]:port` or `localhost:port`; null when METRICS_ADDR is unset (metrics off). */
export function metricsFrom(env: Env): MetricsConfig | null {
  const addr = raw(env, 'METRICS_ADDR');
  if (addr === undefined) return null;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(addr);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !(port >= 1 && port <= 65535) || (match?.[1] !== undefined && !ipaddr.IPv6.isValid(host))) {
    throw new ConfigError(`METRICS_ADDR must be host:port, e.g. 127.0.0.1:9464 or [::1]:9464, got "${addr}"`);
  }
  const token = raw(env, 'METRICS_TOKEN') ?? null;
  // Metrics name routes, outcomes and volumes: on a reachable address they are for the operator only.
  if (token === null && !isLoopback(host)) {
    throw new ConfigError(`METRICS_ADDR ${addr} is not a loopback address: set METRICS_TOKEN, or listen on 127.0.0.1 or [::1]`);
  }
  return { host, port, token };
}

function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (!ipaddr.isValid(host)) return false;
  const address = ipaddr.process(host);
  return address.range() === 'loopback';
}

/** Constant-time check of a scrape's Authorization header against METRICS_TOKEN. */
export function scrapeAllowed(config: MetricsConfig, authorization: string | undefined): boolean {
  if (config.token === null) return true;
  const expected = Buffer.from(`Bearer ${config.token}`);
  const given = Buffer.from(authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
