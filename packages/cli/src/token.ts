import { attenuate, derive, inspect, TokenError, type Restrictions } from '@rz-auth/token';
import { COMMON, parse, tokenFromStdin } from './args.js';
import type { Deps } from './deps.js';
import { CliError, deniedError, usageError } from './errors.js';
import { inspectCommand } from './inspect.js';
import { NARROWING, restrictionsOf, RULE_OF } from './narrowing.js';
import { redact } from './redact.js';
import { loadToken, readHosts, resolveHost } from './storage.js';
import { TOKEN_USAGE } from './usage.js';

/** rz-auth's default DERIVED_MAX_TTL_S (contract §14.2): a longer-lived child is refused there. */
const DEFAULT_SERVER_MAX_TTL_S = 604_800;

/** `rz token derive|attenuate|inspect` (contract §14.7): offline, no server call. */
export async function token(argv: readonly string[], deps: Deps): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === 'derive') return deriveCommand(rest, deps);
  if (sub === 'attenuate') return attenuateCommand(rest, deps);
  if (sub === 'inspect') return inspectCommand(rest, deps);
  if (sub === '--help' || sub === '-h' || sub === 'help') return deps.stdout(TOKEN_USAGE);
  throw usageError(`Usage:\n${TOKEN_USAGE}`);
}

interface Parent {
  readonly value: string;
  /** Where it came from, as the subject of an error message. */
  readonly from: string;
}

/**
 * The parent: stdin with --stdin; otherwise the token `rz auth token` would print (RZ_TOKEN, the
 * keychain, the file). RZ_TOKEN needs no host: deriving makes no call to one.
 */
async function parentOf(v: { stdin?: boolean | undefined; host?: string | undefined }, deps: Deps): Promise<Parent> {
  if (v.stdin === true) {
    if (v.host !== undefined) throw usageError('--stdin reads the parent from stdin and --host picks a stored one: give one of them');
    return { value: await tokenFromStdin(deps, 'rz auth token | rz token derive --stdin --ttl 15m'), from: 'The token on stdin' };
  }
  const fromEnv = deps.env.RZ_TOKEN;
  if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv.trim(), from: 'The token in RZ_TOKEN' };
  const host = resolveHost(v.host, deps, await readHosts(deps));
  const found = await loadToken(deps, host, await deps.loadKeychain());
  if (found === null) throw deniedError(`Not logged in to ${host}: run rz login, set RZ_TOKEN, or pipe a parent in with --stdin`);
  return { value: found.token, from: `The token stored for ${host} (${found.source.kind === 'file' ? found.source.path : found.source.kind})` };
}

function debugLine(deps: Deps, enabled: boolean | undefined, line: string): void {
  if (enabled === true) deps.stderr(`debug: ${redact(line)}\n`);
}

async function deriveCommand(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, { ...COMMON, ...NARROWING, stdin: { type: 'boolean' } });
  if (v.help === true) return deps.stdout(TOKEN_USAGE);
  const restrictions = restrictionsOf(v);
  const ttl = restrictions.ttl;
  if (ttl === undefined) throw usageError('rz token derive needs --ttl: every child expires (for example --ttl 15m)');
  const parent = await parentOf(v, deps);
  debugLine(deps, v.debug, `parent: ${parent.from}`);
  if (parent.value.startsWith('rzd_')) {
    throw new CliError(`${parent.from} is a derived token (rzd_): a child is narrowed with rz token attenuate, not derived from`);
  }
  warnOnLongLife(deps, restrictions);
  const child = orFailure(() => derive(parent.value, { ...restrictions, ttl, now: Math.floor(deps.now() / 1000) }), `${parent.from} is not an rz_ or rza_ token with a valid checksum`);
  printChild(deps, v.debug, child);
}

async function attenuateCommand(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, { ...COMMON, ...NARROWING });
  if (v.help === true) return deps.stdout(TOKEN_USAGE);
  if (v.host !== undefined) throw usageError('rz token attenuate reads the child from stdin; --host has no use here');
  const restrictions = restrictionsOf(v);
  if (Object.keys(restrictions).length === 0) throw usageError('rz token attenuate needs at least one of --ttl, --scopes, --aud, --cidr, --label, --rate');
  const value = await tokenFromStdin(deps, 'rz token derive --ttl 15m | rz token attenuate --ttl 60');
  if (/^rza?_/.test(value)) throw new CliError('The token on stdin is a parent, not a child: make a child of it with rz token derive --stdin');
  warnOnLongLife(deps, restrictions);
  const child = orFailure(() => attenuate(value, { ...restrictions, now: Math.floor(deps.now() / 1000) }), 'The token on stdin is not a well-formed rzd_ token');
  printChild(deps, v.debug, child);
}

/**
 * A longer --ttl is not an error here (the server's limit is its own setting, and the earliest exp
 * counts), but with the default limit such a child is refused, so the user hears of it now.
 */
function warnOnLongLife(deps: Deps, restrictions: Restrictions): void {
  if (typeof restrictions.ttl === 'number' && restrictions.ttl > DEFAULT_SERVER_MAX_TTL_S) {
    deps.stderr('warning: --ttl is longer than 7 days, the default DERIVED_MAX_TTL_S: a server with that default refuses this child\n');
  }
}

/** The token package's answer, its errors as CLI errors that never contain the token. */
function orFailure(make: () => string, malformed: string): string {
  try {
    return make();
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    if (err.code === 'ERR_OPTION_INVALID') {
      const rule = RULE_OF[err.option ?? ''];
      throw rule === undefined ? new CliError(err.message) : usageError(rule);
    }
    if (err.code === 'ERR_TOKEN_TOO_LARGE') throw new CliError('The child would hold more than 16 caveats or 4096 characters: derive a new child from the parent instead');
    throw new CliError(malformed);
  }
}

/** The token alone on stdout (for `$(rz token derive …)`); --debug names the child, never shows it. */
function printChild(deps: Deps, debug: boolean | undefined, child: string): void {
  const { childId, caveats } = inspect(child);
  debugLine(deps, debug, `child ${childId}, caveats ${caveats.map((c) => JSON.stringify({ [c.type]: c.value })).join(' ')}`);
  deps.stdout(`${child}\n`);
}
