import { COMMON, parse } from './args.js';
import type { Deps } from './deps.js';
import { deniedError, usageError } from './errors.js';
import { formatExpiry, hintOf } from './me.js';
import { loadToken, readHosts, resolveHost, type TokenSource } from './storage.js';

const WEEK_MS = 7 * 24 * 3600 * 1000;

/** `rz auth status|token`. */
export async function auth(argv: readonly string[], deps: Deps): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'status') return status(rest, deps);
  if (sub === 'token') return printToken(rest, deps);
  throw usageError('Usage: rz auth status [--json] | rz auth token');
}

/** Prints the token and nothing else on stdout, for `$(rz auth token)`. */
async function printToken(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, COMMON);
  const host = resolveHost(v.host, deps, await readHosts(deps));
  const found = await loadToken(deps, host, await deps.loadKeychain());
  if (found === null) throw deniedError(`Not logged in to ${host}: run rz login`);
  deps.stdout(`${found.token}\n`);
}

const where = (source: TokenSource): string =>
  source.kind === 'file' ? source.path : source.kind === 'env' ? 'RZ_TOKEN environment variable' : 'keychain';

/** What is known locally about the login; no server call, so it works offline. */
async function status(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, { ...COMMON, json: { type: 'boolean' } });
  const hosts = await readHosts(deps);
  const host = resolveHost(v.host, deps, hosts);
  const found = await loadToken(deps, host, await deps.loadKeychain());
  if (found === null) throw deniedError(`Not logged in to ${host}: run rz login`);
  // Metadata describes the stored token; a token from RZ_TOKEN is described by its hint only.
  const record = found.source.kind === 'env' ? undefined : hosts.hosts[host];
  const expiresAt = record?.expires_at ?? null;
  const warnings: string[] = [];
  if (found.source.kind === 'file') warnings.push(`the token is stored in a file (${found.source.path}), not in a keychain`);
  const left = expiresAt === null ? Infinity : Date.parse(expiresAt) - deps.now();
  if (left <= 0) warnings.push('the token has expired: run rz login');
  else if (left < WEEK_MS) warnings.push(`the token expires within 7 days (${formatExpiry(expiresAt)}): run rz login to get a new one`);
  const report = {
    host,
    username: record?.username ?? null,
    token_hint: hintOf(found.token),
    scopes: record?.scopes ?? null,
    expires_at: expiresAt,
    storage: found.source.kind,
    ...(found.source.kind === 'file' ? { path: found.source.path } : {}),
    warnings,
  };
  if (v.json === true) {
    deps.stdout(JSON.stringify(report, null, 2) + '\n');
  } else {
    deps.stdout([
      host,
      `  Logged in as: ${report.username ?? '(unknown: token from RZ_TOKEN)'}`,
      `  Token: ${report.token_hint}`,
      `  Scopes: ${report.scopes === null ? '(unknown)' : report.scopes.length === 0 ? '(none: GET /api/me only)' : report.scopes.join(', ')}`,
      `  Expires: ${record === undefined ? '(unknown)' : formatExpiry(expiresAt)}`,
      `  Stored in: ${where(found.source)}`,
      '',
    ].join('\n'));
    for (const warning of warnings) deps.stderr(`warning: ${warning}\n`);
  }
  if (left <= 0) throw deniedError('The stored token has expired');
}
