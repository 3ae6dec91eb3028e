import type { RouteAuth } from './route.js';

/** A bearer credential as the API document declares it, and which routes it opens. */
interface BearerScheme {
  readonly bearerFormat: string;
  readonly description: string;
  /** The scopes this credential needs on a route declared with `auth`; null when it is not let in. */
  readonly scopes: (auth: RouteAuth) => string[] | null;
}

/**
 * The credentials the API accepts, in the order the document lists them on each operation. A new
 * credential type is one entry here (and its rule in http/guard.ts, which enforces what this declares).
 */
export const SECURITY_SCHEMES = {
  userToken: {
    bearerFormat: 'JWT',
    description:
      'A user token from login or signup: a JWS signed with EdDSA (Ed25519) that follows RFC8725 (JWT Best Current Practices): one algorithm only, explicit `typ`, and `iss`, `aud`, `exp` always checked. Keys: GET /.well-known/jwks.json.',
    scopes: (auth) => (auth.service ? null : []),
  },
  apiToken: {
    bearerFormat: 'rz_',
    description: 'An API token (`rz_` + 43 base62 + 6 base62 checksum). The scope it needs is listed per operation.',
    scopes: (auth) => (auth.api === undefined ? null : auth.api === 'any' ? [] : [auth.api]),
  },
  appToken: {
    bearerFormat: 'rza_',
    description: 'An app token (`rza_` + 43 base62 + 6 base62 checksum). It acts on its own app only.',
    scopes: (auth) => (auth.app ? [] : null),
  },
  serviceToken: {
    bearerFormat: 'rzs_',
    description:
      'A platform service\'s credential (`rzs_` + 43 base62 + 6 base62 checksum), from `rz-auth services create`. It may introspect tokens and read the event stream, and nothing else.',
    scopes: (auth) => (auth.service ? [] : null),
  },
} as const satisfies Record<string, BearerScheme>;

export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

/** The security requirements of a route the guard protects with `auth`: one per credential it lets in. */
export function securityOf(auth: RouteAuth): SecurityRequirement[] {
  const out: SecurityRequirement[] = [];
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES) as Array<[string, BearerScheme]>) {
    const scopes = scheme.scopes(auth);
    if (scopes !== null) out.push({ [name]: scopes });
  }
  return out;
}

interface BearerSchemeObject {
  readonly type: 'http';
  readonly scheme: 'bearer';
  readonly bearerFormat: string;
  readonly description: string;
}

/** `components.securitySchemes` of the document. */
export function securitySchemes(): Record<string, BearerSchemeObject> {
  return Object.fromEntries(
    Object.entries(SECURITY_SCHEMES).map(([name, s]) => [name, { type: 'http', scheme: 'bearer', bearerFormat: s.bearerFormat, description: s.description }]),
  );
}
