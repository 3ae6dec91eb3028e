import { inspect, type Caveat, type Inspection } from '@rz-auth/token';
import { COMMON, parse, tokenFromStdin } from './args.js';
import type { Deps } from './deps.js';
import { CliError } from './errors.js';
import { TOKEN_USAGE } from './usage.js';

/**
 * `rz token inspect [--json]`: decodes a child read from stdin. Nothing is verified (only rz-auth
 * holds what checks the chain, knows the parent and the revocations), and the output says so.
 */
export async function inspectCommand(argv: readonly string[], deps: Deps): Promise<void> {
  const v = parse(argv, { ...COMMON, json: { type: 'boolean' } });
  if (v.help === true) return deps.stdout(TOKEN_USAGE);
  const text = await tokenFromStdin(deps, 'rz token derive --ttl 15m | rz token inspect');
  let decoded: Inspection;
  try {
    decoded = inspect(text);
  } catch {
    // The package's one message for every malformed token: which check failed is not said.
    throw new CliError(/^rza?_/.test(text) ? 'The token on stdin is a parent (rz_ or rza_): only derived tokens (rzd_) can be inspected' : 'The token on stdin is not a well-formed rzd_ token');
  }
  const nowS = Math.floor(deps.now() / 1000);
  deps.stdout(v.json === true ? JSON.stringify(jsonOf(decoded, nowS), null, 2) + '\n' : humanOf(decoded, nowS));
}

const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
const plain = (s: number): string => iso(s).replace('T', ' ').replace('Z', ' UTC');

/** The caveat as the JSON object the token carries. */
const caveatJson = (c: Caveat): Record<string, unknown> => ({ [c.type]: c.value });

function jsonOf(d: Inspection, nowS: number): Record<string, unknown> {
  return {
    verified: false,
    parent_ref: d.parentRef,
    child_id: d.childId,
    caveats: d.caveats.map(caveatJson),
    issued_at: iso(d.iat),
    expires_at: iso(d.exp),
    expired: nowS >= d.exp,
    not_before: d.nbf === undefined ? null : iso(d.nbf),
    // null: no such caveat, so the parent's scopes, and any audience.
    scopes: d.scopes ?? null,
    aud: d.aud ?? null,
    cidrs: d.cidrs,
    labels: d.labels,
    rate_limits: d.rl,
  };
}

/** "1d 2h", "14m 59s": how long until `s`. */
function span(seconds: number): string {
  const parts = [[86_400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']] as const;
  const out: string[] = [];
  let rest = seconds;
  for (const [size, unit] of parts) {
    if (rest >= size && out.length < 2) out.push(`${Math.floor(rest / size)}${unit}`);
    if (out.length > 0) rest %= size;
  }
  return out.join(' ') || '0s';
}

function caveatLine(c: Caveat): string {
  switch (c.type) {
    case 'iat':
    case 'exp':
    case 'nbf':
      return `${c.type} ${plain(c.value)}`;
    case 'rl':
      return `rl ${c.value.q} requests per ${c.value.w} s`;
    case 'label':
      return `label ${JSON.stringify(c.value)}`;
    default:
      return `${c.type} ${c.value.length === 0 ? '(none)' : c.value.join(', ')}`;
  }
}

function humanOf(d: Inspection, nowS: number): string {
  const list = (items: readonly string[] | undefined, absent: string): string =>
    items === undefined ? absent : items.length === 0 ? 'none' : items.join(', ');
  return [
    'Derived token (rzd_), decoded WITHOUT verifying: only rz-auth checks its signature, its parent and revocations.',
    `Parent ref:  ${d.parentRef}`,
    `Child id:    ${d.childId}`,
    'Caveats, in order:',
    ...d.caveats.map((c, i) => `  ${String(i + 1).padStart(2)}. ${caveatLine(c)}`),
    'In effect, as far as the caveats go (the parent\'s current scopes, expiry and networks can narrow them further):',
    `  Issued:      ${plain(d.iat)}`,
    `  Expires:     ${plain(d.exp)} (${nowS >= d.exp ? 'expired' : `in ${span(d.exp - nowS)}`})`,
    ...(d.nbf === undefined ? [] : [`  Not before:  ${plain(d.nbf)}`]),
    `  Scopes:      ${list(d.scopes, "the parent's (no scopes caveat)")}`,
    `  Audience:    ${list(d.aud, 'any service (no aud caveat)')}`,
    `  Networks:    ${d.cidrs.length === 0 ? 'any (no cidrs caveat)' : d.cidrs.map((l) => `[${l.join(', ')}]`).join(' and ')}`,
    `  Rate limits: ${d.rl.length === 0 ? "the parent's only" : d.rl.map((r) => `${r.q} per ${r.w} s`).join(', ')}`,
    `  Labels:      ${d.labels.length === 0 ? 'none' : d.labels.join(' › ')}`,
    '',
  ].join('\n');
}
