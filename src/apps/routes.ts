import { Type } from 'typebox';
import { principalOf } from '../api/route.js';
import { IdParams, responses, Timestamp, Uuid } from '../api/schemas.js';
import { type Http, security } from '../api/route.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { requestedScopes } from '../scopes/routes.js';
import type { AppService, AppTokenInput, IssuedAppToken } from './service.js';
import type { App } from './store.js';

const APP_TOKEN_SCOPES = 'Scopes of the platform that app tokens may carry. Omitted means none: the token can call GET /api/me and read its own app.';

const registerAppBody = (catalogue: ScopeCatalogue) =>
  Type.Object(
    {
      name: Type.String({ maxLength: 1000, description: '1 to 100 characters after trimming.', examples: ['Space Invaders'] }),
      description: Type.Optional(Type.String({ maxLength: 4000, description: 'Up to 1000 characters.', examples: ['A retro shooter.'] })),
      scopes: Type.Optional(requestedScopes(catalogue, 'app_token', `The first app token's scopes. ${APP_TOKEN_SCOPES}`)),
    },
    { additionalProperties: false },
  );

/** The optional body of POST /api/apps/{id}/tokens: validated when one is sent, none needed. */
const issueTokenBody = (catalogue: ScopeCatalogue) => ({
  content: {
    'application/json': {
      schema: Type.Object({ scopes: Type.Optional(requestedScopes(catalogue, 'app_token', APP_TOKEN_SCOPES)) }, { additionalProperties: false }),
    },
  },
});

const AppRecord = Type.Object(
  { id: Uuid, name: Type.String(), description: Type.String(), created_at: Timestamp },
  { additionalProperties: false },
);

const AppTokenValue = Type.String({
  description: 'The app token value. Shown only in this response: store it now.',
  examples: ['rza_<43 random base62><6 base62 checksum>'],
});

const RegisteredApp = Type.Object(
  { id: Uuid, name: Type.String(), description: Type.String(), created_at: Timestamp, token: AppTokenValue, token_id: Uuid },
  { additionalProperties: false },
);

const IssuedToken = Type.Object({ token: AppTokenValue, token_id: Uuid, created_at: Timestamp }, { additionalProperties: false });

const record = (a: App) => ({ id: a.id, name: a.name, description: a.description, created_at: a.createdAt });
const issued = (t: IssuedAppToken) => ({ token: t.value, token_id: t.tokenId, created_at: t.createdAt });

/** Apps and their tokens. */
export function appRoutes(app: Http, apps: AppService, catalogue: ScopeCatalogue): void {
  const RegisterAppBody = registerAppBody(catalogue);
  app.post('/api/apps', {
    config: { auth: { api: 'apps:write' } },
    schema: {
      tags: ['apps'],
      summary: 'Register an app; the response carries its first app token',
      security: [security.user, security.api('apps:write')],
      body: RegisterAppBody,
      response: responses({ 201: RegisteredApp }, 'validation_failed', 'unauthorized', 'invalid_token', 'insufficient_scope', 'unsupported_media_type', 'payload_too_large'),
    },
    handler: async (request, reply) => {
      const { app: created, token } = await apps.register(principalOf(request).user.id, request.body);
      return reply.code(201).send({ ...record(created), token: token.value, token_id: token.tokenId });
    },
  });

  app.get('/api/apps', {
    config: { auth: { api: 'apps:read' } },
    schema: {
      tags: ['apps'],
      summary: 'List your apps, newest first',
      security: [security.user, security.api('apps:read')],
      response: responses({ 200: Type.Object({ apps: Type.Array(AppRecord) }, { additionalProperties: false }) }, 'unauthorized', 'invalid_token', 'insufficient_scope'),
    },
    handler: async (request) => ({ apps: (await apps.list(principalOf(request).user.id)).map(record) }),
  });

  app.get('/api/apps/:id', {
    config: { auth: { api: 'apps:read', app: true } },
    schema: {
      tags: ['apps'],
      summary: 'Read one of your apps',
      description: 'An app token may read only its own app (403 for any other id).',
      security: [security.user, security.api('apps:read'), security.app],
      params: IdParams,
      response: responses({ 200: AppRecord }, 'unauthorized', 'invalid_token', 'insufficient_scope', 'not_found'),
    },
    handler: async (request) => record(await apps.get(principalOf(request), request.params.id)),
  });

  app.delete('/api/apps/:id', {
    config: { auth: { api: 'apps:write' } },
    schema: {
      tags: ['apps'],
      summary: 'Delete an app and revoke every one of its tokens',
      security: [security.user, security.api('apps:write')],
      params: IdParams,
      response: responses({ 204: Type.Null({ description: 'Deleted.' }) }, 'unauthorized', 'invalid_token', 'insufficient_scope', 'not_found'),
    },
    handler: async (request, reply) => {
      await apps.delete(principalOf(request).user.id, request.params.id);
      return reply.code(204).send(null);
    },
  });

  app.post('/api/apps/:id/tokens', {
    config: { auth: { api: 'apps:write' } },
    schema: {
      tags: ['apps'],
      summary: 'Issue an additional app token',
      description: 'For rotation: issue a new token, deploy it, then revoke the old one with DELETE /api/tokens/{token_id}.',
      security: [security.user, security.api('apps:write')],
      params: IdParams,
      body: issueTokenBody(catalogue),
      response: responses(
        { 201: IssuedToken },
        'validation_failed',
        'unauthorized',
        'invalid_token',
        'insufficient_scope',
        'not_found',
        'unsupported_media_type',
        'payload_too_large',
      ),
    },
    handler: async (request, reply) => {
      // Validated against the schema above whenever a body was sent; without one there are no scopes.
      const input = (request.body ?? {}) as AppTokenInput;
      return reply.code(201).send(issued(await apps.issueToken(principalOf(request).user.id, request.params.id, input)));
    },
  });
}
