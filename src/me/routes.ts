import fastJson from 'fast-json-stringify';
import { type Static, Type } from 'typebox';
import type { Principal } from '../auth/principal.js';
import { iso } from '../clock.js';
import { type Http, principalOf, type RouteAuth, security } from '../api/route.js';
import { NullableTimestamp, responses, Uuid } from '../api/schemas.js';

const MeResponse = Type.Object(
  {
    id: Uuid,
    username: Type.String(),
    email: Type.Optional(Type.String({ description: 'Omitted for app tokens, which may ship inside a published app.' })),
    auth: Type.Object(
      {
        type: Type.Union([Type.Literal('user'), Type.Literal('api_token'), Type.Literal('app_token')]),
        token_id: Type.String({ description: 'The session id for a user token, otherwise the token id.' }),
        scopes: Type.Array(Type.String(), { description: '`["*"]` for a user token; the scopes chosen for an API or app token, built-in and platform ones (GET /api/scopes).' }),
        expires_at: NullableTimestamp,
      },
      { additionalProperties: false },
    ),
    app: Type.Optional(Type.Object({ id: Uuid, name: Type.String() }, { additionalProperties: false, description: 'Only for app tokens.' })),
  },
  { additionalProperties: false },
);

/** Who may call `GET /api/me`: any valid token. */
export const ME_AUTH: RouteAuth = { api: 'any', app: true };

/** The body's serializer (Fastify's own, over the response schema), shared with http/me-shortcut.ts. */
export const serializeMe: (body: Static<typeof MeResponse>) => string = fastJson(MeResponse);

/** The body of `GET /api/me`. */
export function meBody(p: Principal): Static<typeof MeResponse> {
  return {
    id: p.user.id,
    username: p.user.username,
    // An app token may ship inside a published game: it must not reveal its owner's email.
    ...(p.type === 'app_token' ? {} : { email: p.user.email }),
    auth: { type: p.type, token_id: p.credentialId, scopes: [...p.scopes], expires_at: p.expiresAt === null ? null : iso(p.expiresAt) },
    ...(p.app ? { app: { id: p.app.id, name: p.app.name } } : {}),
  };
}

/** `GET /api/me`: who the caller is and with what credential. */
export function meRoutes(app: Http): void {
  app.get('/api/me', {
    config: { auth: ME_AUTH },
    schema: {
      tags: ['me'],
      summary: 'The caller and the credential in use',
      security: [security.user, security.api(), security.app],
      response: responses({ 200: MeResponse }, 'unauthorized', 'invalid_token', 'validation_failed'),
    },
    handler: async (request, reply) => reply.type('application/json; charset=utf-8').serializer(serializeMe).send(meBody(principalOf(request))),
  });
}
