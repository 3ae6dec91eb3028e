import type { LoadSpec } from './load.js';
import type { ServerName } from './servers.js';
import type { Credentials } from './setup.js';

/** A figure the issue sets for a scenario. Informational: a miss is marked, never an exit status. */
export type Target =
  /** At least `min` times the baseline, measured next to it: the baseline's CPU per answer over the scenario's (req/s off Linux). */
  | { readonly kind: 'ratio'; readonly min: number }
  | { readonly kind: 'rps'; readonly min: number }
  | { readonly kind: 'p99'; readonly maxMs: number }
  /** The server's CPU use at least this share of every core (argon2id keeping the machine busy). */
  | { readonly kind: 'cores'; readonly minShare: number }
  | { readonly kind: 'rss'; readonly maxMb: number }
  /** The mail worker handed at least `min` messages a second to the loopback relay during the slices. */
  | { readonly kind: 'mails'; readonly min: number };

export interface LoadShape {
  /** Connections of every closed-loop hot-path load: enough to saturate a server. */
  readonly connections: number;
  /** Connections of a login load: enough to keep every hash slot busy and a queue waiting. */
  readonly loginConnections: number;
  /** Connections of the latency probe: so few that requests hardly queue behind each other. */
  readonly probeConnections: number;
}

/**
 * One row of the table. To add one: give it a load against one of the servers in servers.ts (add
 * the process there if it is a new one) and, when its point is a ratio, the id of the scenario it
 * is compared with as `baseline`. The harness then measures the two in alternating slices and
 * reports the median of each slice's ratio to the baseline slices around it (schedule.ts).
 */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly server: ServerName;
  /** The scenario this one is a ratio to. Without one the row has no ratio (the ceiling, a latency probe). */
  readonly baseline?: string;
  /** The measured load. */
  readonly load: (c: Credentials, shape: LoadShape) => LoadSpec;
  /** A load that runs around the measured one without being reported (the login flood). */
  readonly background?: (c: Credentials, shape: LoadShape) => LoadSpec;
  /** Mails queued per second into the outbox around the measured load (bench/mail.ts); the row's background figure is then mails sent per second. */
  readonly mailFeed?: number;
  /** The load's bodies are second steps of logins, each with its own `mfa_token` and TOTP code, made before each run (bench/mfa.ts). */
  readonly secondFactorLogins?: true;
  /** The load's bodies are passkey logins, each with its own challenge and assertion, made before each run (bench/passkey.ts). */
  readonly passkeyLogins?: true;
  readonly targets: readonly Target[];
}

/** Peak RSS of rz-auth under any load. */
const RSS: Target = { kind: 'rss', maxMb: 150 };

const me = (token: string, connections: number): LoadSpec => ({ method: 'GET', path: '/api/me', token, connections });

const whoami = (token: string, connections: number): LoadSpec => ({ method: 'GET', path: '/whoami', token, connections });

/** The second step of a login; its bodies come from bench/mfa.ts (`secondFactorLogins`). */
const mfaVerify = (connections: number): LoadSpec => ({ method: 'POST', path: '/api/auth/mfa/verify', connections });

const login = (c: Credentials, shape: LoadShape): LoadSpec => ({
  method: 'POST',
  path: '/api/auth/login',
  body: { email: c.email, password: c.password },
  connections: shape.loginConnections,
});

const hotMe = (id: string, title: string, token: (c: Credentials) => string, minRatio: number): Scenario => ({
  id,
  title,
  server: 'rz-auth',
  baseline: 'ceiling',
  load: (c, s) => me(token(c), s.connections),
  targets: [{ kind: 'ratio', min: minRatio }, RSS],
});

/** Every scenario, in the order a run measures them; a baseline comes before what is compared with it. */
export const SCENARIOS: readonly Scenario[] = [
  {
    id: 'ceiling',
    title: 'ceiling: bare Fastify GET /api/me',
    server: 'ceiling',
    load: (c, s) => me(c.apiToken, s.connections),
    targets: [],
  },
  hotMe('me-api-token', 'GET /api/me, API token', (c) => c.apiToken, 0.65),
  hotMe('me-api-token-allow-list', 'GET /api/me, API token with a network allow-list', (c) => c.allowListedToken, 0.75),
  hotMe('me-app-token', 'GET /api/me, app token', (c) => c.appToken, 0.8),
  hotMe('me-user-jwt', 'GET /api/me, user JWT', (c) => c.jwt, 0.7),
  hotMe('me-derivable-parent', 'GET /api/me, derivable API token (the baseline of me-derived)', (c) => c.derivableToken, 0.65),
  {
    // Contract §12.11 compares with the previous build, which a run cannot start beside this one:
    // the baseline is this build's password-only JWT (amr ["pwd"]) on the same route. What the
    // row measures is what a second factor (in the token's amr, on the account) costs GET /api/me.
    id: 'me-user-jwt-mfa',
    title: 'GET /api/me, user JWT from password + TOTP (amr, auth_time), against a password-only JWT (not the previous build)',
    server: 'rz-auth',
    baseline: 'me-user-jwt',
    load: (c, s) => me(c.mfaJwt, s.connections),
    targets: [{ kind: 'ratio', min: 0.97 }, RSS],
  },
  {
    // What counting every request costs: the same process and load with METRICS_ADDR set.
    id: 'me-api-token-metrics',
    title: 'GET /api/me, API token, metrics on (METRICS_ADDR)',
    server: 'rz-auth-metrics',
    baseline: 'me-api-token',
    load: (c, s) => me(c.apiToken, s.connections),
    targets: [{ kind: 'ratio', min: 0.95 }, RSS],
  },
  {
    // No baseline: a scraper's few connections bound its rate. The full series set is scraped
    // (every gauge computed, the store and the webhook queue queried) while the API is saturated.
    id: 'metrics-scrape',
    title: 'GET /metrics, 2 connections, during me-api-token-metrics load',
    server: 'rz-auth-metrics',
    load: (_c, s) => ({ method: 'GET', path: '/metrics', connections: s.probeConnections, listener: 'metrics' }),
    background: (c, s) => me(c.apiToken, s.connections),
    targets: [{ kind: 'p99', maxMs: 50 }, RSS],
  },
  {
    // What tracing costs at the shipped ratio (docs/operations.md): measured against the same server untraced.
    id: 'me-api-token-tracing',
    title: 'GET /api/me, API token, tracing on (ratio 0.01, OTLP/HTTP to a local sink)',
    server: 'rz-auth-tracing',
    baseline: 'me-api-token',
    load: (c, s) => me(c.apiToken, s.connections),
    targets: [{ kind: 'ratio', min: 0.9 }, RSS],
  },
  {
    // What sending mail costs the API: the same load on a server whose delivery child
    // (MAIL_WORKER=process, the default) sends a steady stream of mails to a loopback relay. The
    // CPU per request is the API process's alone; the child's CPU per mail is shown beside it.
    id: 'me-during-mail',
    title: 'GET /api/me, API token, while its delivery child sends 250 mails/s (SMTP_URL to a loopback relay); CPU of the API process',
    server: 'rz-auth-mail',
    baseline: 'me-api-token',
    load: (c, s) => me(c.apiToken, s.connections),
    mailFeed: 250,
    targets: [{ kind: 'ratio', min: 0.95 }, { kind: 'mails', min: 200 }, RSS],
  },
  {
    // The delivery child's capacity: mails are queued faster than it can send them, and the relay
    // counts what it accepts; the measured load is a 2-connection probe of GET /healthz.
    id: 'mail-throughput',
    title: 'mail delivery child: mails/s handed to a loopback relay (1,000/s queued), GET /healthz probe',
    server: 'rz-auth-mail',
    load: (_c, s) => ({ method: 'GET', path: '/healthz', connections: s.probeConnections }),
    mailFeed: 1000,
    targets: [{ kind: 'mails', min: 200 }, RSS],
  },
  {
    // Contract §14.10: a 5-caveat child against its own parent, same run (parse, parent lookup, unwrap, HMAC chain).
    id: 'me-derived',
    title: 'GET /api/me, 5-caveat rzd_ child, against its derivable parent rz_',
    server: 'rz-auth',
    baseline: 'me-derivable-parent',
    load: (c, s) => me(c.derivedToken, s.connections),
    targets: [{ kind: 'ratio', min: 0.85 }, RSS],
  },
  {
    // What a platform service pays per cache miss, against what the caller itself pays for GET /api/me.
    id: 'introspect',
    title: 'POST /api/introspect (form), API token',
    server: 'rz-auth',
    baseline: 'me-api-token',
    load: (c, s) => ({ method: 'POST', path: '/api/introspect', token: c.serviceToken, form: { token: c.apiToken }, connections: s.connections }),
    targets: [{ kind: 'ratio', min: 0.6 }, RSS],
  },
  {
    // What a CLI waiting for approval costs (contract §13.10), against GET /api/me with an API token.
    // One pending code polled flat out: after the first poll every answer is slow_down, which takes
    // the same path as authorization_pending (the digest lookup and one conditional update).
    id: 'device-poll',
    title: 'POST /oauth/token (form), a pending device code',
    server: 'rz-auth',
    baseline: 'me-api-token',
    load: (c, s) => ({ method: 'POST', path: '/oauth/token', form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: c.deviceCode, client_id: 'rz-cli' }, expectedStatus: 400, connections: s.connections }),
    targets: [{ kind: 'ratio', min: 0.5 }, RSS],
  },
  {
    id: 'introspect-derivable-parent',
    title: 'POST /api/introspect (form), derivable API token (the baseline of introspect-derived)',
    server: 'rz-auth',
    baseline: 'me-api-token',
    load: (c, s) => ({ method: 'POST', path: '/api/introspect', token: c.serviceToken, form: { token: c.derivableToken }, connections: s.connections }),
    targets: [{ kind: 'ratio', min: 0.6 }, RSS],
  },
  {
    // Contract §14.10: introspecting a 5-caveat child (its audience names the bench's service) against its parent.
    id: 'introspect-derived',
    title: 'POST /api/introspect (form), 5-caveat rzd_ child, against its derivable parent',
    server: 'rz-auth',
    baseline: 'introspect-derivable-parent',
    load: (c, s) => ({ method: 'POST', path: '/api/introspect', token: c.serviceToken, form: { token: c.derivedToken }, connections: s.connections }),
    targets: [{ kind: 'ratio', min: 0.85 }, RSS],
  },
  {
    // The example service with its token check removed: what the service costs without @rz-auth/verify.
    id: 'resource-baseline',
    title: 'example service, check removed: GET /whoami',
    server: 'resource-baseline',
    load: (c, s) => whoami(c.apiToken, s.connections),
    targets: [],
  },
  {
    // What checking a token costs a platform service once the answer is cached (the common case).
    id: 'resource-whoami',
    title: 'example service GET /whoami, API token cached by @rz-auth/verify',
    server: 'resource-server',
    baseline: 'resource-baseline',
    load: (c, s) => whoami(c.apiToken, s.connections),
    targets: [{ kind: 'ratio', min: 0.8 }],
  },
  {
    id: 'tokens-create',
    title: 'POST /api/tokens',
    server: 'rz-auth',
    baseline: 'ceiling',
    load: (c, s) => ({ method: 'POST', path: '/api/tokens', token: c.jwt, body: { name: 'bench' }, connections: s.connections }),
    targets: [{ kind: 'rps', min: 2000 }, RSS],
  },
  {
    // The second step of a login against a token creation: both write (the attempt, the factor's
    // step, the token's end, a session and an audit line against a token row and an audit line).
    // Each request has its own mfa_token and user, written by the harness (bench/mfa.ts).
    id: 'mfa-verify',
    title: 'POST /api/auth/mfa/verify (TOTP), a fresh mfa_token and factor step per request',
    server: 'rz-auth',
    baseline: 'tokens-create',
    load: (_c, s) => mfaVerify(s.connections),
    secondFactorLogins: true,
    targets: [{ kind: 'ratio', min: 0.8 }, RSS],
  },
  {
    // A reset request is one insert on the request path whatever the email; looking the email up
    // happens after the answer (docs/email.md), and its CPU is counted per request too.
    id: 'password-reset',
    title: 'POST /api/auth/password-reset, an email no account has (mail on)',
    server: 'rz-auth-mail',
    baseline: 'tokens-create',
    load: (_c, s) => ({ method: 'POST', path: '/api/auth/password-reset', body: { email: 'nobody@bench.example.com' }, connections: s.connections }),
    targets: [{ kind: 'ratio', min: 0.8 }, RSS],
  },
  {
    id: 'login',
    title: 'POST /api/auth/login (argon2id)',
    server: 'rz-auth',
    baseline: 'ceiling',
    load: login,
    targets: [{ kind: 'cores', minShare: 0.85 }, RSS],
  },
  {
    // Contract §12.11: a passkey login computes no password hash, so it should cost a tenth of a
    // password login or less. Each request has its own challenge, written by the harness, and an
    // assertion signed over it (bench/passkey.ts).
    id: 'passkey-login',
    title: 'POST /api/auth/passkey/login (ES256), a fresh challenge per request, against a password login',
    server: 'rz-auth',
    baseline: 'login',
    load: (_c, s) => ({ method: 'POST', path: '/api/auth/passkey/login', connections: s.connections }),
    passkeyLogins: true,
    targets: [{ kind: 'ratio', min: 10 }, RSS],
  },
  {
    id: 'me-during-login-flood',
    title: 'GET /api/me, API token, during a login flood',
    server: 'rz-auth',
    baseline: 'ceiling',
    load: (c, s) => me(c.apiToken, s.connections),
    background: login,
    targets: [{ kind: 'p99', maxMs: 25 }, RSS],
  },
  {
    // No baseline: its req/s is bounded by its few connections, not by rz-auth.
    id: 'me-probe-during-login-flood',
    title: 'GET /api/me, API token, latency probe, during a login flood',
    server: 'rz-auth',
    load: (c, s) => me(c.apiToken, s.probeConnections),
    background: login,
    targets: [{ kind: 'p99', maxMs: 25 }, RSS],
  },
  {
    // The second step's responsiveness while argon2id saturates its pool: a probe's two
    // connections, as me-probe-during-login-flood (at 50 connections its p99 would be queueing
    // behind the load's own writes, not what the flood does to it). No baseline, like that probe.
    id: 'mfa-verify-during-login-flood',
    title: 'POST /api/auth/mfa/verify (TOTP), latency probe, during a login flood',
    server: 'rz-auth',
    load: (_c, s) => mfaVerify(s.probeConnections),
    secondFactorLogins: true,
    background: login,
    targets: [{ kind: 'p99', maxMs: 25 }, RSS],
  },
];

/** The scenarios `only` names (all when null) and, through their baselines, what they are compared with, in run order. */
export function selectScenarios(only: readonly string[] | null, all: readonly Scenario[] = SCENARIOS): Scenario[] {
  const wanted = new Set<string>();
  const add = (id: string): void => {
    if (wanted.has(id)) return;
    const scenario = all.find((s) => s.id === id);
    if (!scenario) throw new Error(`unknown scenario ${id}`);
    wanted.add(id);
    if (scenario.baseline) add(scenario.baseline);
  };
  for (const id of only ?? all.map((s) => s.id)) add(id);
  return all.filter((s) => wanted.has(s.id));
}
