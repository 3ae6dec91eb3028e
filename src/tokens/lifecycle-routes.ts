import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { AllowedCidrs, IdParams, Label, NullableTimestamp, ScopeName, ScopeNames, Timestamp, Uuid } from '../api/schemas.js';
import { ENDED_VISIBLE, EndFields } from './state-schemas.js';
import { UpdateBody } from './bodies.js';
import { MAX_TOKEN_SCOPES } from './scopes.js';
import type { TokenDetail } from './lifecycle-store.js';
import { MAX_GRACE_SECONDS, type TokenLifecycle } from './lifecycle.js';
import { tokenSummary } from './routes.js';
import { DerivableRequest, derivedFields } from './derived/parents.js';
import type { TokenRecord } from './store.js';

/** The prefix and last four characters of an API or app token: what lists show of its value. */
export const Hint = Type.String({ pattern: '^rza?_[0-9A-Za-z]{4}$', maxLength: 8, description: 'The prefix and the last four characters of the value.', examples: ['rz_x7Qa'] });
export const LastUsed = Type.Union([Timestamp, Type.Null()], { description: 'Updated within a few seconds of use.' });
const NullableCidrs = Type.Union([AllowedCidrs, Type.Null()], { description: 'The networks the token may be used from; null for anywhere.' });

const Detail = Type.Object(
  {
    id: Uuid,
    type: Type.Enum(['api_token', 'app_token']),
    name: Label,
    scopes: ScopeNames,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    last_used_at: LastUsed,
    hint: Hint,
    allowed_cidrs: NullableCidrs,
    last_used_ip: Type.Union([Type.String({ maxLength: 64, examples: ['203.0.113.7'] }), Type.Null()], {
      description: 'The client address of the last use (as the rate limiter sees it); null before the first use.',
    }),
    ...EndFields,
    origin: Type.Enum(['api', 'device_flow'], { description: '`device_flow` for a token issued to a CLI by device authorization (docs/device-flow.md), `api` for any other.' }),
    client_id: Type.Union([Type.String({ maxLength: 40, examples: ['rz-cli'] }), Type.Null()], { description: 'The device flow\'s client; null for other tokens.' }),
    device_name: Type.Union([Type.String({ maxLength: 64, examples: ['ada-laptop'] }), Type.Null()], {
      description: 'The name the device reported for itself, unverified; null when it gave none, and for other tokens.',
    }),
    ...derivedFields,
    scopes_used: Type.Array(ScopeName, {
      uniqueItems: true,
      maxItems: MAX_TOKEN_SCOPES,
      description: "The token's scopes that rz-auth's own routes have needed and it exercised; platform scopes are checked by the platform's services and are not seen here.",
    }),
  },
  { additionalProperties: false },
);


const RotateBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({ format: 'int32', minimum: 0, maximum: MAX_GRACE_SECONDS, description: 'How long the old token keeps working; 0 (the default) ends it at once.', examples: [3600] }),
    ),
    derivable: DerivableRequest,
  },
  { additionalProperties: false },
);

const Rotated = Type.Object(
  {
    id: Uuid,
    token: Type.String({
      pattern: '^rza?_[0-9A-Za-z]{49}$',
      maxLength: 53,
      description: 'The new value, of the same kind as the old one. Shown only in this response: store it now.',
    }),
    type: Type.Enum(['api_token', 'app_token']),
    name: Label,
    scopes: ScopeNames,
    allowed_cidrs: NullableCidrs,
    created_at: Timestamp,
    expires_at: NullableTimestamp,
    replaces: Type.String({ format: 'uuid', maxLength: 36, description: 'The id of the token this one replaces.' }),
  },
  { additionalProperties: false },
);

const typeOf = (t: TokenRecord) => (t.kind === 'api' ? ('api_token' as const) : ('app_token' as const));

const detail = (t: TokenDetail) => ({
  ...tokenSummary(t),
  type: typeOf(t),
  allowed_cidrs: t.allowedCidrs && [...t.allowedCidrs],
  last_used_ip: t.lastUsedIp,
  scopes_used: [...t.scopesUsed],
  origin: t.device ? ('device_flow' as const) : ('api' as const),
  client_id: t.device?.clientId ?? null,
  device_name: t.device?.deviceName ?? null,
});

const TOKEN_OWNERSHIP = "An API token of yours or an app token of one of your apps; anyone else's is 404.";
const ACTIVE_ONLY = `${TOKEN_OWNERSHIP} An expired or revoked one is 404 too.`;

/** The token lifecycle: detail, narrowing, rotation (docs/token-lifecycle.md). */
export function tokenLifecycleRoutes(app: Http, lifecycle: TokenLifecycle): void {
  app.get('/api/tokens/:id', {
    ...operation({
      method: 'GET',
      operationId: 'getToken',
      tags: ['tokens'],
      summary: 'Read one token: its last use and the scopes it exercised',
      description: `${TOKEN_OWNERSHIP} An expired or revoked token answers with its \`state\` and when it ended (\`expires_at\`, \`revoked_at\`). ${ENDED_VISIBLE} Never the value or its digest.`,
      auth: { api: 'tokens:read' },
      params: IdParams,
      success: { 200: { description: 'The token.', schema: Detail } },
    }),
    handler: async (request) => detail(await lifecycle.detail(principalOf(request).user.id, request.params.id)),
  });

  app.patch('/api/tokens/:id', {
    ...operation({
      method: 'PATCH',
      operationId: 'updateToken',
      tags: ['tokens'],
      summary: 'Rename a token, or narrow its scopes, networks or derivation',
      description: `${ACTIVE_ONLY} Scopes and networks may only shrink (400 naming the field otherwise). Effective on the next request, on every instance. A body that names no field, or only values the token already has, changes nothing and records no event. A token already rotated is 409: change its replacement.`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      body: UpdateBody,
      problems: ['conflict'],
      success: { 200: { description: 'The token as it now is.', schema: Detail } },
    }),
    handler: async (request) => detail(await lifecycle.update(principalOf(request).user.id, request.params.id, request.body, contextOf(request))),
  });

  app.post('/api/tokens/:id/rotate', {
    ...operation({
      method: 'POST',
      operationId: 'rotateToken',
      mintsToken: true,
      tags: ['tokens'],
      summary: 'Replace a token with a new value, keeping the old one for a grace period',
      description: `${ACTIVE_ONLY} The new token has the same kind, name, scopes, networks and lifetime length (from now). The old one stops after grace_seconds, on every instance, by time; a token already rotated is 409.`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      body: RotateBody,
      optionalBody: true,
      problems: ['conflict'],
      success: { 201: { description: 'Rotated: the new token and its value.', schema: Rotated } },
    }),
    handler: async (request, reply) => {
      const { value, token, replaces } = await lifecycle.rotate(principalOf(request).user.id, request.params.id, request.body?.grace_seconds ?? 0, contextOf(request), request.body?.derivable);
      return reply.code(201).send({
        id: token.id,
        token: value,
        type: typeOf(token),
        name: token.name,
        scopes: [...token.scopes],
        allowed_cidrs: token.allowedCidrs && [...token.allowedCidrs],
        created_at: token.createdAt,
        expires_at: token.expiresAt,
        replaces,
      });
    },
  });
}
