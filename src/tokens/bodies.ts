import { type Static, Type } from 'typebox';
import { AllowedCidrs, ScopeName } from '../api/schemas.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { requestedScopes } from '../scopes/routes.js';
import { MAX_TOKEN_SCOPES } from './scopes.js';
import { DerivableRequest, DerivableUpdate } from './derived/parents.js';

/*
 * The request bodies of /api/tokens… that the services take as validated, apart from the routes so
 * that a service's input type never makes it import its routes.
 */

/** The body of POST /api/tokens; its scopes are the catalogue's that API tokens may carry. */
export const createTokenBody = (catalogue: ScopeCatalogue) =>
  Type.Object(
    {
      name: Type.String({ maxLength: 1000, description: '1 to 100 characters after trimming.', examples: ['deploy script'] }),
      scopes: Type.Optional(requestedScopes(catalogue, 'api_token', 'Omitted means none: the token can call GET /api/me only.')),
      expires_at: Type.Optional(
        Type.String({
          format: 'date-time',
          maxLength: 64,
          description: 'ISO 8601, in the future. Omitted means no expiry, unless the server sets a maximum lifetime (TOKEN_MAX_LIFETIME_DAYS): then it is required and within it.',
          examples: ['2027-01-01T00:00:00Z'],
        }),
      ),
      allowed_cidrs: Type.Optional(AllowedCidrs),
      derivable: DerivableRequest,
    },
    { additionalProperties: false },
  );

/** The body of POST /api/tokens as validated: what TokenService.createApiToken takes. */
export type CreateApiTokenBody = Static<ReturnType<typeof createTokenBody>>;

export const UpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000, description: '1 to 100 characters after trimming.', examples: ['deploy script'] })),
    scopes: Type.Optional(Type.Array(ScopeName, { maxItems: MAX_TOKEN_SCOPES, description: 'A subset of the current scopes.' })),
    allowed_cidrs: Type.Optional({ ...AllowedCidrs, description: 'Every network inside one the token already allows; any list for a token without one.' }),
    derivable: DerivableUpdate,
  },
  { additionalProperties: false },
);

/** The body of PATCH /api/tokens/{id} as validated: what TokenLifecycle.update takes. */
export type UpdateTokenBody = Static<typeof UpdateBody>;
