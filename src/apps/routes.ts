import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf } from '../api/route.js';
import { AllowedCidrs, IdParams, Label, listPage, PageQuery, ScopeNames, Timestamp, Uuid } from '../api/schemas.js';
import { DEFAULT_CAPS } from '../lib/caps.js';
import { parsePage } from '../lib/pages.js';
import type { ScopeCatalogue } from '../scopes/catalogue.js';
import { TOKEN_SHAPE } from '../lib/token-format.js';
import { type IssueAppTokenBody, issueTokenBody, registerAppBody } from './bodies.js';
import type { AppService, IssuedAppToken } from './service.js';
import type { App } from './store.js';


const Description = Type.String({ maxLength: 1000, examples: ['A retro shooter.'] });

const AppRecord = Type.Object({ id: Uuid, name: Label, description: Description, created_at: Timestamp }, { additionalProperties: false });

const AppTokenValue = Type.String({
  pattern: TOKEN_SHAPE.app.source,
  maxLength: 53,
  description: 'The app token value: `rza_` + 43 random base62 + 6 base62 checksum. Shown only in this response: store it now.',
});

/** What a new app token may do, as POST /api/tokens answers it for an API token. */
const IssuedLimits = {
  scopes: { ...ScopeNames, description: "The app token's scopes." },
  expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When the app token expires; null for never.' }),
  allowed_cidrs: Type.Union([AllowedCidrs, Type.Null()], { description: 'The networks the app token may be used from; null for anywhere.' }),
};

const RegisteredApp = Type.Object(
  { id: Uuid, name: Label, description: Description, created_at: Timestamp, token: AppTokenValue, token_id: Uuid, ...IssuedLimits },
  { additionalProperties: false },
);

const IssuedToken = Type.Object({ token: AppTokenValue, token_id: Uuid, created_at: Timestamp, ...IssuedLimits }, { additionalProperties: false });

const record = (a: App) => ({ id: a.id, name: a.name, description: a.description, created_at: a.createdAt });
const limitsOf = (t: IssuedAppToken) => ({ scopes: [...t.scopes], expires_at: t.expiresAt, allowed_cidrs: t.allowedCidrs && [...t.allowedCidrs] });
const issued = (t: IssuedAppToken) => ({ token: t.value, token_id: t.tokenId, created_at: t.createdAt, ...limitsOf(t) });

/** Apps and their tokens. */
export function appRoutes(app: Http, apps: AppService, catalogue: ScopeCatalogue): void {
  const RegisterAppBody = registerAppBody(catalogue);
  app.post('/api/apps', {
    ...operation({
      method: 'POST',
      operationId: 'registerApp',
      mintsToken: true,
      tags: ['apps'],
      summary: 'Register an app; the response carries its first app token',
      description:
        `The app token value is in this response only. Issue more with POST /api/apps/{id}/tokens. Made with an API token, the app token gets only scopes that token holds, its allow-list and no later expiry. At most MAX_APPS_PER_USER apps per user (${DEFAULT_CAPS.appsPerUser} by default; 409 \`conflict\` naming it beyond).`,
      auth: { api: 'apps:write' },
      body: RegisterAppBody,
      problems: ['conflict'],
      success: { 201: { description: 'Registered: the app and its first app token.', schema: RegisteredApp } },
    }),
    handler: async (request, reply) => {
      const { app: created, token } = await apps.register(principalOf(request), request.body, contextOf(request));
      return reply.code(201).send({ ...record(created), token: token.value, token_id: token.tokenId, ...limitsOf(token) });
    },
  });

  app.get('/api/apps', {
    ...operation({
      method: 'GET',
      operationId: 'listApps',
      tags: ['apps'],
      summary: 'List your apps, newest first',
      description: 'A page at a time. Never returns a token value. A bad `limit` or `cursor` is 400 naming it.',
      auth: { api: 'apps:read' },
      querystring: PageQuery,
      success: { 200: { description: 'A page of your apps.', schema: listPage('apps', AppRecord, 'Your apps.') } },
    }),
    handler: async (request) => {
      const listed = await apps.list(principalOf(request).user.id, parsePage(request.query));
      return { apps: listed.items.map(record), next_cursor: listed.nextCursor };
    },
  });

  app.get('/api/apps/:id', {
    ...operation({
      method: 'GET',
      operationId: 'getApp',
      tags: ['apps'],
      summary: 'Read one of your apps',
      description: "An app token may read only its own app (403 for any other id). Someone else's app is 404, like one that does not exist.",
      auth: { api: 'apps:read', app: true },
      params: IdParams,
      success: { 200: { description: 'The app.', schema: AppRecord } },
    }),
    handler: async (request) => record(await apps.get(principalOf(request), request.params.id)),
  });

  app.delete('/api/apps/:id', {
    ...operation({
      method: 'DELETE',
      operationId: 'deleteApp',
      tags: ['apps'],
      summary: 'Delete an app and revoke every one of its tokens',
      description: 'Its tokens stop working on the next request, on every instance.',
      auth: { api: 'apps:write' },
      params: IdParams,
      success: { 204: { description: 'Deleted.' } },
    }),
    handler: async (request, reply) => {
      await apps.delete(principalOf(request).user.id, request.params.id, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/api/apps/:id/tokens', {
    ...operation({
      method: 'POST',
      operationId: 'issueAppToken',
      mintsToken: true,
      tags: ['apps'],
      summary: 'Issue an additional app token',
      description:
        `To replace a token without downtime, rotate it with POST /api/tokens/{token_id}/rotate and a grace period. Made with an API token, the app token gets only scopes that token holds, networks inside its allow-list (its list when none is given) and no later expiry. At most MAX_TOKENS_PER_APP active tokens per app (${DEFAULT_CAPS.tokensPerApp} by default; a token in its rotation grace does not count; 409 \`conflict\` naming it beyond).`,
      auth: { api: 'apps:write' },
      params: IdParams,
      body: issueTokenBody(catalogue),
      optionalBody: true,
      problems: ['conflict'],
      success: { 201: { description: 'Issued: the new token and its value.', schema: IssuedToken } },
    }),
    handler: async (request, reply) => {
      // Validated against the body schema whenever a body was sent; without one there are no scopes.
      const input: IssueAppTokenBody = request.body ?? {};
      return reply.code(201).send(issued(await apps.issueToken(principalOf(request), request.params.id, input, contextOf(request))));
    },
  });
}
