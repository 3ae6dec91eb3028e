import { bool, ConfigError, type Env, int, raw } from '../lib/env-vars.js';
import { isLoopbackHost, publicUrlFrom } from '../lib/public-url.js';

/** The device flow's settings (contract §13.2, docs/device-flow.md). */
export interface DeviceFlowConfig {
  /** PUBLIC_URL: the RFC 8414 `issuer` and the origin of `verification_uri`; null when unset. */
  readonly publicUrl: URL | null;
  /** DEVICE_FLOW_ENABLED: off, the device endpoints and the approval API are 404. */
  readonly enabled: boolean;
  readonly codeTtlS: number;
  readonly pollIntervalS: number;
  readonly tokenMaxDays: number;
  readonly maxPendingPerAddress: number;
}

/**
 * The address of a server that listens on loopback only: there nobody but this machine can reach
 * it, so it is the one address a CLI can use, and `npm start` then `rz login` work with no setting.
 */
function loopbackOrigin({ host, port }: { host: string; port: number }): URL | null {
  if (port === 0 || !isLoopbackHost(host)) return null;
  return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}/`);
}

/**
 * DEVICE_* from the environment. The flow needs PUBLIC_URL (the page's address is what the CLI
 * shows), which defaults to the listening address on a loopback HOST only: elsewhere,
 * DEVICE_FLOW_ENABLED=true without it refuses to start, and left unset the flow is off.
 */
export function deviceFlowFrom(env: Env, listen: { host: string; port: number }): DeviceFlowConfig {
  const publicUrl = publicUrlFrom(env) ?? loopbackOrigin(listen);
  const asked = raw(env, 'DEVICE_FLOW_ENABLED') !== undefined;
  const enabled = bool(env, 'DEVICE_FLOW_ENABLED', publicUrl !== null);
  if (enabled && publicUrl === null) {
    throw new ConfigError(`DEVICE_FLOW_ENABLED needs PUBLIC_URL, the address the device page is served at (e.g. https://auth.example.com)${asked ? '' : '; or set DEVICE_FLOW_ENABLED=false'}`);
  }
  return {
    publicUrl,
    enabled,
    codeTtlS: int(env, 'DEVICE_CODE_TTL_S', 900, 300, 1800),
    pollIntervalS: int(env, 'DEVICE_POLL_INTERVAL_S', 5, 5, 30),
    tokenMaxDays: int(env, 'DEVICE_TOKEN_MAX_DAYS', 90, 1, 36_500),
    maxPendingPerAddress: int(env, 'DEVICE_MAX_PENDING_PER_IP', 10, 1, 10_000),
  };
}

/** An absolute URL under PUBLIC_URL (whose path, if any, is a prefix ending in a slash). */
export const publicLink = (base: URL, path: string): string => new URL(path.replace(/^\//, ''), base).toString();
