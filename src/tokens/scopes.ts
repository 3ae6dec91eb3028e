/** The API token scope catalogue. A token gets only the scopes chosen at creation. */
export const SCOPES = ['apps:read', 'apps:write', 'tokens:read'] as const;
export type Scope = (typeof SCOPES)[number];

/** What a scope name looks like (docs/platform-services.md), unanchored: `apps:read`, `games:publish`. */
export const SCOPE_NAME = '[a-z][a-z0-9_-]{0,31}(:[a-z][a-z0-9_-]{0,31}){1,2}';
export const MAX_SCOPE_NAME_LENGTH = 98;

/** The most scopes the operator may declare in SCOPES_FILE. */
export const MAX_PLATFORM_SCOPES = 500;
/** The most scopes one token can carry: every built-in one and every platform one. */
export const MAX_TOKEN_SCOPES = SCOPES.length + MAX_PLATFORM_SCOPES;

/** What each scope grants, for the OpenAPI document and the Developers page. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'apps:read': 'List and read your apps (GET /api/apps, GET /api/apps/{id}).',
  'apps:write': 'Register and delete your apps and issue app tokens (POST /api/apps, DELETE /api/apps/{id}, POST /api/apps/{id}/tokens).',
  'tokens:read': 'List your API tokens (GET /api/tokens).',
};
