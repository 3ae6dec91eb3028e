import { Type } from 'typebox';
import { DEFAULT_PROBLEM, responses } from '../api/schemas.js';
import type { Http } from '../api/route.js';
import type { ScopeCatalogue } from './catalogue.js';
import { MAX_DESCRIPTION_LENGTH, MAX_PLATFORM_SCOPES, SCOPE_NAME, type ScopeTokenType } from './file.js';

/** The most scopes any token can hold: every built-in one and every platform one. */
const MAX_SCOPES = MAX_PLATFORM_SCOPES + 10;

/** A scope name as it appears in responses. */
export const ScopeName = Type.String({ maxLength: 98, pattern: SCOPE_NAME.source, examples: ['games:publish'] });

/** The scopes of a token, in responses. */
export const ScopeNames = Type.Array(ScopeName, { maxItems: MAX_SCOPES, uniqueItems: true });

/**
 * The `scopes` of a request that creates a token of `type`: the catalogue's names for that type,
 * each at most once. Anything else is 400 naming `scopes` (or the item), and nothing is created.
 */
export function requestedScopes(catalogue: ScopeCatalogue, type: ScopeTokenType, description: string) {
  const names = catalogue.allowed(type);
  // An empty enum is not valid JSON Schema: with nothing allowed, the only valid list is empty.
  const item = names.length > 0 ? Type.Unsafe<string>({ type: 'string', maxLength: 98, enum: [...names] }) : Type.String({ maxLength: 98 });
  return Type.Array(item, { uniqueItems: true, maxItems: names.length, description: `${description} See GET /api/scopes.` });
}

const ScopeEntry = Type.Object(
  {
    name: ScopeName,
    description: Type.String({ maxLength: MAX_DESCRIPTION_LENGTH * 2, examples: ['Publish games to the catalogue.'] }),
    token_types: Type.Array(Type.Union([Type.Literal('api_token'), Type.Literal('app_token')]), { minItems: 1, maxItems: 2, uniqueItems: true }),
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
    config: { rateLimit: 'address' },
    schema: {
      operationId: 'listScopes',
      tags: ['scopes'],
      summary: 'List the scopes tokens can carry',
      description:
        'No authentication. The built-in scopes grant rz-auth\'s own routes to API tokens; the platform\'s scopes (SCOPES_FILE) are checked by the platform\'s services. `token_types` says which tokens may be given each scope.',
      security: [],
      response: {
        ...responses({ 200: Type.Object({ scopes: Type.Array(ScopeEntry, { maxItems: MAX_SCOPES }) }, { additionalProperties: false }) }),
        default: DEFAULT_PROBLEM,
      },
    },
    handler: async (_request, reply) => {
      // Changes only with a restart: caches may keep it a minute, as they keep the JWKS.
      reply.header('cache-control', 'public, max-age=60');
      return body;
    },
  });
}
