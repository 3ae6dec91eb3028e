import { bool, ConfigError, type Env, int, raw } from '../../lib/env-vars.js';
import { parseOriginList } from '../../lib/origins.js';
import { publicUrlFrom } from '../../lib/public-url.js';
import { type SealingKeys, sealingKeysFrom } from '../../lib/sealed.js';

/** The relying party of WebAuthn ceremonies (W3C WebAuthn Level 3 §5.1.4, §7.1 step 9). */
export interface WebAuthnRelyingParty {
  readonly rpId: string;
  readonly rpName: string;
  /** Exact origins accepted in `clientDataJSON`. */
  readonly origins: readonly string[];
}

/** Second factors and step-up (contract §12.2), parsed once at start-up. */
export interface MfaConfig {
  /** MFA_ENCRYPTION_KEY (and _OLD during a rotation): seals TOTP secrets; TOTP is off without a current key. */
  readonly encryption: SealingKeys;
  readonly totpIssuer: string;
  /** Null when neither WEBAUTHN_RP_ID nor PUBLIC_URL names the relying party: passkeys are off. */
  readonly webauthn: WebAuthnRelyingParty | null;
  readonly reauthMaxAgeS: number;
  readonly required: boolean;
  readonly graceDays: number;
  readonly stepUpAllUsers: boolean;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function parseRpId(env: Env, base: URL | null): string | null {
  const value = raw(env, 'WEBAUTHN_RP_ID')?.toLowerCase() ?? base?.hostname ?? null;
  // An RP ID is a domain: no scheme, port or path (WebAuthn §5.1.4 "RP ID").
  if (value !== null && !HOST_NAME.test(value)) throw new ConfigError(`WEBAUTHN_RP_ID must be a domain such as example.com (no scheme, port or path), got "${value.slice(0, 100)}"`);
  return value;
}

/**
 * Browsers run WebAuthn only in secure contexts, and accept an RP ID only when it is the origin's
 * host or a registrable suffix of it (WebAuthn §5.1.4.1): an origin outside it could never succeed.
 */
function checkOrigins(origins: readonly string[], rpId: string): void {
  for (const origin of origins) {
    const { protocol, hostname, host } = new URL(origin);
    if (protocol !== 'https:' && !LOOPBACK.has(hostname) && !LOOPBACK.has(host)) throw new ConfigError(`WEBAUTHN_ORIGINS: ${origin} must use https (http only for localhost)`);
    if (hostname !== rpId && !hostname.endsWith(`.${rpId}`)) throw new ConfigError(`WEBAUTHN_ORIGINS: ${origin} is not within WEBAUTHN_RP_ID ${rpId}`);
  }
}

function parseWebAuthn(env: Env, base: URL | null): WebAuthnRelyingParty | null {
  const rpId = parseRpId(env, base);
  const listed = parseOriginList(env, 'WEBAUTHN_ORIGINS');
  if (rpId === null) {
    if (listed !== undefined) throw new ConfigError('WEBAUTHN_ORIGINS is set without WEBAUTHN_RP_ID or PUBLIC_URL to name the relying party');
    return null;
  }
  const origins = listed ?? (base ? [base.origin] : []);
  if (origins.length === 0) throw new ConfigError('WEBAUTHN_RP_ID is set without WEBAUTHN_ORIGINS or PUBLIC_URL: no origin could complete a ceremony');
  checkOrigins(origins, rpId);
  const rpName = raw(env, 'WEBAUTHN_RP_NAME') ?? 'rz-auth';
  if (rpName.length > 64) throw new ConfigError('WEBAUTHN_RP_NAME must be at most 64 characters');
  return { rpId, rpName, origins };
}

function parseIssuer(env: Env, base: URL | null): string {
  const issuer = raw(env, 'TOTP_ISSUER') ?? base?.hostname ?? 'rz-auth';
  // The issuer is the label's prefix before ':' in the otpauth URI (Key Uri Format): a colon would split it.
  if (issuer.length > 100 || issuer.includes(':')) throw new ConfigError(`TOTP_ISSUER must be at most 100 characters without ':', got "${issuer.slice(0, 100)}"`);
  return issuer;
}

/** The §12.2 variables. @throws ConfigError naming the first invalid one. */
export function mfaFrom(env: Env): MfaConfig {
  const base = publicUrlFrom(env);
  return {
    encryption: sealingKeysFrom(env, 'MFA_ENCRYPTION_KEY'),
    totpIssuer: parseIssuer(env, base),
    webauthn: parseWebAuthn(env, base),
    reauthMaxAgeS: int(env, 'REAUTH_MAX_AGE_S', 900, 10, 86_400),
    required: bool(env, 'MFA_REQUIRED', false),
    graceDays: int(env, 'MFA_GRACE_DAYS', 14, 0, 365),
    stepUpAllUsers: bool(env, 'STEP_UP_ALL_USERS', false),
  };
}
