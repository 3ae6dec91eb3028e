import { Type } from 'typebox';
import { principalOf } from '../api/route.js';
import { IdParams, NullableTimestamp, responses, Timestamp, Uuid } from '../api/schemas.js';
import { type Http, security } from '../api/route.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { requestedScopes } from '../scopes/routes.js';
import type { TokenService } from './service.js';
import type { TokenRecord } from './store.js';

/** The body of POST /api/tokens; its scopes are the catalogue's that API tokens may carry. */
const createTokenBody = (catalogue: ScopeCatalogue) =>
  Type.Object(
    {
      name: Type.String({ maxLength: 1000, description: '1 to 100 characters after trimming.', examples: ['deploy script'] }),
      scopes: Type.Optional(requestedScopes(catalogue, 'api_token', 'Omitted means none: the token can call GET /api/me only.')),
      expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, in the future. Omitted means no expiry.' })),
    },
    { additionalProperties: false },
  );

const CreatedToken = Type.Object(
  {
    id: Uuid,
    token: Type.String({ description: 'The token value. Shown only in this response: store it now.', examples: ['rz_<43 random base62><6 base62 checksum>'] }),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
  },
  { additionalProperties: false },
);

const TokenSummary = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Updated within a few seconds of use.' }),
    hint: Type.String({ description: '`rz_` and the last four characters of the value.', examples: ['rz_x7Qa'] }),
  },
  { additionalProperties: false },
);

const summary = (t: TokenRecord) => ({
  id: t.id,
  name: t.name,
  scopes: [...t.scopes],
  created_at: t.createdAt,
  expires_at: t.expiresAt,
  last_used_at: t.lastUsedAt,
  hint: t.hint,
});

/** API tokens: create, list, revoke. */
export function tokenRoutes(app: Http, tokens: TokenService, catalogue: ScopeCatalogue): void {
  const CreateTokenBody = createTokenBody(catalogue);
  app.post('/api/tokens', {
    config: { auth: {} },
    schema: {
      tags: ['tokens'],
      summary: 'Create an API token',
      description: 'Needs a user token: no token can mint a token.',
      security: [security.user],
      body: CreateTokenBody,
      response: responses({ 201: CreatedToken }, 'validation_failed', 'unauthorized', 'invalid_token', 'insufficient_scope', 'unsupported_media_type', 'payload_too_large'),
    },
    handler: async (request, reply) => {
      const { value, token } = await tokens.createApiToken(principalOf(request).user.id, request.body);
      return reply.code(201).send({
        id: token.id,
        token: value,
        name: token.name,
        scopes: [...token.scopes],
        created_at: token.createdAt,
        expires_at: token.expiresAt,
      });
    },
  });

  app.get('/api/tokens', {
    config: { auth: { api: 'tokens:read' } },
    schema: {
      tags: ['tokens'],
      summary: 'List your active API tokens, newest first',
      description: 'Never returns a token value or digest.',
      security: [security.user, security.api('tokens:read')],
      response: responses({ 200: Type.Object({ tokens: Type.Array(TokenSummary) }, { additionalProperties: false }) }, 'unauthorized', 'invalid_token', 'insufficient_scope'),
    },
    handler: async (request) => ({ tokens: (await tokens.listApiTokens(principalOf(request).user.id)).map(summary) }),
  });

  app.delete('/api/tokens/:id', {
    config: { auth: {} },
    schema: {
      tags: ['tokens'],
      summary: 'Revoke an API token, or an app token of one of your apps',
      description: 'Takes effect on the very next request. Unknown, someone else\'s or already revoked: 404.',
      security: [security.user],
      params: IdParams,
      response: responses({ 204: Type.Null({ description: 'Revoked.' }) }, 'unauthorized', 'invalid_token', 'insufficient_scope', 'not_found'),
    },
    handler: async (request, reply) => {
      await tokens.revoke(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  });
}
