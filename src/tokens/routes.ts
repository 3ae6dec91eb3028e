import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { AllowedCidrs, IdParams, Label, listPage, NullableTimestamp, PageParams, ScopeNames, Timestamp, Uuid } from '../api/schemas.js';
import { DEFAULT_CAPS } from '../lib/caps.js';
import { parsePage } from '../lib/pages.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { TOKEN_SHAPE } from '../lib/token-format.js';
import { createTokenBody } from './bodies.js';
import type { TokenService } from './service.js';
import { ENDED_VISIBLE, EndFields, StateParam } from './state-schemas.js';
import type { ListedToken } from './list-store.js';
import { derivedFields, derivedSummary } from './derived/parents.js';


const CreatedToken = Type.Object(
  {
    id: Uuid,
    token: Type.String({
      pattern: TOKEN_SHAPE.api.source,
      maxLength: 52,
      description: 'The token value: `rz_` + 43 random base62 + 6 base62 checksum. Shown only in this response: store it now.',
    }),
    name: Label,
    scopes: ScopeNames,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    allowed_cidrs: Type.Union([AllowedCidrs, Type.Null()], { description: 'The networks the token may be used from; null for anywhere.' }),
  },
  { additionalProperties: false },
);

const TokenSummary = Type.Object(
  {
    id: Uuid,
    name: Label,
    scopes: ScopeNames,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Updated within a few seconds of use.' }),
    hint: Type.String({ pattern: '^rz_[0-9A-Za-z]{4}$', maxLength: 7, description: '`rz_` and the last four characters of the value.', examples: ['rz_x7Qa'] }),
    ...EndFields,
    ...derivedFields,
  },
  { additionalProperties: false },
);

/** A token as GET /api/tokens lists it; its detail (GET /api/tokens/{id}) adds to it. */
export const tokenSummary = (t: ListedToken) => ({
  id: t.id,
  name: t.name,
  scopes: [...t.scopes],
  created_at: t.createdAt,
  expires_at: t.expiresAt,
  last_used_at: t.lastUsedAt,
  hint: t.hint,
  state: t.state,
  revoked_at: t.revokedAt,
  ...derivedSummary(t),
});

const TokensQuery = Type.Object({ ...PageParams, state: StateParam }, { additionalProperties: false });

/** API tokens: create, list, revoke. */
export function tokenRoutes(app: Http, tokens: TokenService, catalogue: ScopeCatalogue): void {
  const CreateTokenBody = createTokenBody(catalogue);
  app.post('/api/tokens', {
    ...operation({
      method: 'POST',
      operationId: 'createApiToken',
      mintsToken: true,
      tags: ['tokens'],
      summary: 'Create an API token',
      description: `Needs a user token: no token can mint a token. The value is in this response only. At most MAX_API_TOKENS_PER_USER active API tokens per user (${DEFAULT_CAPS.apiTokensPerUser} by default; a token in its rotation grace does not count; 409 \`conflict\` naming it beyond).`,
      auth: USER_TOKEN_ONLY,
      body: CreateTokenBody,
      problems: ['conflict'],
      success: { 201: { description: 'Created: the token and its value.', schema: CreatedToken } },
    }),
    handler: async (request, reply) => {
      const { value, token } = await tokens.createApiToken(principalOf(request).user.id, request.body, contextOf(request));
      return reply.code(201).send({
        id: token.id,
        token: value,
        name: token.name,
        scopes: [...token.scopes],
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        allowed_cidrs: token.allowedCidrs && [...token.allowedCidrs],
      });
    },
  });

  app.get('/api/tokens', {
    ...operation({
      method: 'GET',
      operationId: 'listApiTokens',
      tags: ['tokens'],
      summary: 'List your API tokens, newest first',
      description: `The caller's API tokens in \`state\` (active by default), a page at a time. ${ENDED_VISIBLE} Never returns a token value or digest. A bad \`limit\`, \`cursor\` or \`state\` is 400 naming it.`,
      auth: { api: 'tokens:read' },
      querystring: TokensQuery,
      success: { 200: { description: 'A page of your API tokens.', schema: listPage('tokens', TokenSummary, 'Your API tokens in the state asked for.') } },
    }),
    handler: async (request) => {
      const { state = 'active', ...page } = request.query;
      const listed = await tokens.listApiTokens(principalOf(request).user.id, state, parsePage(page));
      return { tokens: listed.items.map(tokenSummary), next_cursor: listed.nextCursor };
    },
  });

  app.delete('/api/tokens/:id', {
    ...operation({
      method: 'DELETE',
      operationId: 'revokeToken',
      tags: ['tokens'],
      summary: 'Revoke an API token, or an app token of one of your apps',
      description: "Takes effect on the very next request, on every instance. Unknown, someone else's or already revoked: 404.",
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      success: { 204: { description: 'Revoked.' } },
    }),
    handler: async (request, reply) => {
      await tokens.revoke(principalOf(request).user.id, request.params.id, contextOf(request));
      return reply.code(204).send(null);
    },
  });
}
