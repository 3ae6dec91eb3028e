import type { ServiceCredentialStore } from '../service-credentials/store.js';
import { AllowList } from '../tokens/cidrs.js';
import { type OpaqueKind, tokenDigest } from '../lib/token-format.js';
import type { TokenLookup, TokenStore } from '../tokens/store.js';
import type { Caller, Principal } from './principal.js';

/** What the store says of an opaque token: who it stands for, and whether it was revoked. */
export interface OpaqueEntry {
  readonly caller: Caller;
  readonly revoked: boolean;
  /** The token's network allow-list, parsed once when the entry is loaded; null for anywhere. */
  readonly allowed: AllowList | null;
  /** An API or app token's name and hint, for the audit events about it; null for a service credential. */
  readonly label: { readonly name: string; readonly hint: string } | null;
}

/** Looks an opaque token of a known kind up by its digest: users' tokens and services' credentials alike. */
export async function findOpaque(
  stores: { readonly tokens: TokenStore; readonly services: ServiceCredentialStore },
  token: string,
  kind: OpaqueKind,
): Promise<OpaqueEntry | undefined> {
  const digest = tokenDigest(token);
  if (kind === 'service') {
    const found = await stores.services.findByDigest(digest);
    return found && { caller: { type: 'service', credentialId: found.id, name: found.name }, revoked: found.revokedAt !== null, allowed: null, label: null };
  }
  const found = await stores.tokens.findByDigest(digest);
  if (!found) return undefined;
  const { allowedCidrs, name, hint } = found.token;
  return { caller: toPrincipal(found), revoked: found.revoked, allowed: allowedCidrs === null ? null : new AllowList(allowedCidrs), label: { name, hint } };
}

function toPrincipal({ token, owner, app }: TokenLookup): Principal {
  return {
    type: token.kind === 'api' ? 'api_token' : 'app_token',
    user: owner,
    credentialId: token.id,
    scopes: token.scopes,
    issuedAt: Date.parse(token.createdAt),
    expiresAt: token.expiresAt === null ? null : Date.parse(token.expiresAt),
    app,
    allowedCidrs: token.allowedCidrs,
  };
}
