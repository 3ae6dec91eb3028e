import { type Static, Type } from 'typebox';
import { AllowedCidrs } from '../api/schemas.js';
import { DerivableRequest } from '../tokens/derived/parents.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { requestedScopes } from '../scopes/routes.js';

/*
 * The request bodies of /api/apps… that AppService takes as validated, apart from the routes so
 * that the service's input type never makes it import its routes.
 */

const APP_TOKEN_SCOPES = 'Scopes of the platform that app tokens may carry. Omitted means none: the token can call GET /api/me and read its own app.';

export const registerAppBody = (catalogue: ScopeCatalogue) =>
  Type.Object(
    {
      name: Type.String({ maxLength: 1000, description: '1 to 100 characters after trimming.', examples: ['Space Invaders'] }),
      description: Type.Optional(Type.String({ maxLength: 4000, description: 'Up to 1000 characters.', examples: ['A retro shooter.'] })),
      scopes: Type.Optional(requestedScopes(catalogue, 'app_token', `The first app token's scopes. ${APP_TOKEN_SCOPES}`)),
    },
    { additionalProperties: false },
  );

/** The body of POST /api/apps/{id}/tokens, which may be omitted. */
export const issueTokenBody = (catalogue: ScopeCatalogue) =>
  Type.Object(
    { scopes: Type.Optional(requestedScopes(catalogue, 'app_token', APP_TOKEN_SCOPES)), allowed_cidrs: Type.Optional(AllowedCidrs), derivable: DerivableRequest },
    { additionalProperties: false },
  );

/** The bodies of POST /api/apps and POST /api/apps/{id}/tokens as validated: what AppService takes. */
export type RegisterAppBody = Static<ReturnType<typeof registerAppBody>>;
export type IssueAppTokenBody = Static<ReturnType<typeof issueTokenBody>>;
