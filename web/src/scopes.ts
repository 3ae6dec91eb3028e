import { listScopes, type ScopeInfo, type ScopeTokenType } from './api.js';

/**
 * The scope catalogue, as GET /api/scopes lists it: rz-auth's own scopes and the platform's
 * (SCOPES_FILE). Fetched once per page load; a failed fetch is tried again next time.
 */
let catalogue: Promise<readonly ScopeInfo[]> | null = null;

export function loadScopes(): Promise<readonly ScopeInfo[]> {
  catalogue ??= listScopes().then(
    (answer) => answer.scopes,
    (error: unknown) => {
      catalogue = null;
      throw error;
    },
  );
  return catalogue;
}

/** The scopes a token of `type` may be given, in the catalogue's order. */
export const scopesFor = (all: readonly ScopeInfo[], type: ScopeTokenType): ScopeInfo[] => all.filter((s) => s.token_types.includes(type));
