import type { CpuSet } from './cpus.js';
import type { LoadSpec } from './load.js';
import type { Credentials } from './setup.js';

/** A figure the issue sets for a scenario. Informational: a miss is marked, never an exit code. */
export type Target =
  | { readonly kind: 'ratio'; readonly min: number }
  | { readonly kind: 'rps'; readonly min: number }
  | { readonly kind: 'p99'; readonly maxMs: number }
  /** rz-auth's CPU use at least this share of every core (argon2id keeping the machine busy). */
  | { readonly kind: 'cores'; readonly minShare: number };

/** Peak RSS of rz-auth under every load, in MB. */
export const RSS_LIMIT_MB = 150;

export interface LoadShape {
  /** Connections of every closed-loop hot-path load. */
  readonly connections: number;
  /** Connections of a login load: enough to keep every hash slot busy and a queue waiting. */
  readonly loginConnections: number;
  /** Connections of the GET /api/me latency probe: so few that requests hardly queue behind each other. */
  readonly probeConnections: number;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly server: 'ceiling' | 'rz-auth';
  /** One core for the hot path, every core where argon2id runs (see cpus.ts). */
  readonly cpus: CpuSet;
  /** The measured load. */
  readonly load: (c: Credentials, shape: LoadShape) => LoadSpec;
  /** A load that runs during warm-up and measurement but is not what is reported. */
  readonly background?: (c: Credentials, shape: LoadShape) => LoadSpec;
  readonly targets: readonly Target[];
  /**
   * A latency probe: too few connections to saturate the server, so its p99 is the event loop's
   * responsiveness rather than queueing, and its req/s is no capacity (no ratio to the ceiling).
   */
  readonly probe?: boolean;
  /**
   * Measured in slices alternating with slices of the ceiling, each slice compared with the mean
   * of the two around it: on a shared machine the ceiling itself moves by a fifth within a minute,
   * so a hot-path ratio is only as good as the ceiling next to it. Set where the ratio is the point.
   */
  readonly bracketed?: boolean;
}

const me = (token: string, connections: number, path = '/api/me'): LoadSpec => ({ method: 'GET', path, token, connections });

const login = (c: Credentials, shape: LoadShape): LoadSpec => ({
  method: 'POST',
  path: '/api/auth/login',
  body: { email: c.email, password: c.password },
  connections: shape.loginConnections,
});

/** A hot-path `GET /api/me` of rz-auth with one kind of credential, bracketed, with its ratio target. */
const hotMe = (id: string, title: string, token: (c: Credentials) => string, minRatio: number): Scenario => ({
  id,
  title,
  server: 'rz-auth',
  cpus: 'hot',
  load: (c, s) => me(token(c), s.connections),
  targets: [{ kind: 'ratio', min: minRatio }],
  bracketed: true,
});

/** Every scenario, in the order each round runs them. The ceiling comes first. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'ceiling',
    title: 'ceiling: bare Fastify GET /api/me',
    server: 'ceiling',
    cpus: 'hot',
    load: (c, s) => me(c.apiToken, s.connections),
    targets: [],
  },
  {
    id: 'headers-floor',
    title: 'reference: ceiling + rz-auth response headers',
    server: 'ceiling',
    cpus: 'hot',
    load: (c, s) => me(c.apiToken, s.connections, '/reference/headers/api/me'),
    targets: [],
    bracketed: true,
  },
  hotMe('me-api-token', 'GET /api/me, API token', (c) => c.apiToken, 0.8),
  hotMe('me-app-token', 'GET /api/me, app token', (c) => c.appToken, 0.8),
  hotMe('me-user-jwt', 'GET /api/me, user JWT', (c) => c.jwt, 0.7),
  {
    id: 'tokens-create',
    title: 'POST /api/tokens',
    server: 'rz-auth',
    cpus: 'hot',
    load: (c, s) => ({ method: 'POST', path: '/api/tokens', token: c.jwt, body: { name: 'bench' }, connections: s.connections }),
    targets: [{ kind: 'rps', min: 2000 }],
  },
  { id: 'login', title: 'POST /api/auth/login (argon2id)', server: 'rz-auth', cpus: 'all', load: login, targets: [{ kind: 'cores', minShare: 0.85 }] },
  {
    id: 'me-during-login-flood',
    title: 'GET /api/me, API token, during a login flood',
    server: 'rz-auth',
    cpus: 'all',
    load: (c, s) => me(c.apiToken, s.connections),
    background: login,
    targets: [{ kind: 'p99', maxMs: 25 }],
  },
  {
    id: 'me-probe-during-login-flood',
    title: 'GET /api/me, API token, latency probe, during a login flood',
    server: 'rz-auth',
    cpus: 'all',
    load: (c, s) => me(c.apiToken, s.probeConnections),
    background: login,
    targets: [{ kind: 'p99', maxMs: 25 }],
    probe: true,
  },
];
