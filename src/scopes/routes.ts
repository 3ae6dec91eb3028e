import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import type { Http } from '../api/route.js';
import { ScopeName } from '../api/schemas.js';
import { MAX_SCOPE_NAME_LENGTH, MAX_TOKEN_SCOPES } from '../tokens/scopes.js';
import type { ScopeCatalogue } from './catalogue.js';
import { MAX_DESCRIPTION_LENGTH, type ScopeTokenType } from './file.js';

/**
 * The `scopes` of a request that creates a token of `type`: the catalogue's names for that type,
 * each at most once. Anything else is 400 naming `scopes` (or the item), and nothing is created.
 */
export function requestedScopes(catalogue: ScopeCatalogue, type: ScopeTokenType, description: string) {
  const names = catalogue.allowed(type);
  // An empty enum is not valid JSON Schema: with nothing allowed, the only valid list is empty.
  // The enum alone decides (a pattern beside it would only add a second message for one mistake).
  const item = names.length > 0 ? Type.Unsafe<string>({ type: 'string', maxLength: MAX_SCOPE_NAME_LENGTH, enum: [...names] }) : ScopeName;
  return Type.Array(item, { uniqueItems: true, maxItems: names.length, description: `${description} See GET /api/scopes.` });
}

const ScopeEntry = Type.Object(
  {
    name: ScopeName,
    description: Type.String({ minLength: 1, maxLength: MAX_DESCRIPTION_LENGTH, examples: ['Publish games to the catalogue.'] }),
    token_types: Type.Array(Type.Enum(['api_token', 'app_token']), { minItems: 1, maxItems: 2, uniqueItems: true }),
    builtin: Type.Boolean({ description: 'True for rz-auth\'s own scopes; false for the platform\'s, declared in SCOPES_FILE.' }),
  },
  { additionalProperties: false },
);

/** `GET /api/scopes`: the catalogue, so people and tools can choose scopes with their descriptions. */
export function scopeRoutes(app: Http, catalogue: ScopeCatalogue): void {
  const body = {
    scopes: catalogue.entries.map((e) => ({ name: e.name, description: e.description, token_types: [...e.tokenTypes], builtin: e.builtin })),
  };
  app.get('/api/scopes', {
    ...operation({
      method: 'GET',
      operationId: 'listScopes',
      tags: ['scopes'],
      summary: 'List the scopes tokens can carry',
      description:
        'No authentication. The built-in scopes grant rz-auth\'s own routes to API tokens; the platform\'s scopes (SCOPES_FILE) are checked by the platform\'s services. `token_types` says which tokens may be given each scope.',
      auth: 'public',
      rateLimit: 'address',
      success: {
        200: { description: 'The catalogue, built-in scopes first.', schema: Type.Object({ scopes: Type.Array(ScopeEntry, { maxItems: MAX_TOKEN_SCOPES }) }, { additionalProperties: false }) },
      },
    }),
    handler: async (_request, reply) => {
      // Changes only with a restart: caches may keep it a minute, as they keep the JWKS.
      reply.header('cache-control', 'public, max-age=60');
      return body;
    },
  });
}
