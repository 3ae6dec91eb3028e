import { Type } from 'typebox';
import { type Http, security } from '../api/route.js';
import { DEFAULT_PROBLEM, responses, Uuid } from '../api/schemas.js';
import type { Introspector } from './introspection.js';

/** Far beyond any token of ours (a JWT is at most 2 KiB): longer strings are refused as a request. */
const MAX_TOKEN_LENGTH = 8192;

const IntrospectBody = Type.Object(
  {
    token: Type.String({ maxLength: MAX_TOKEN_LENGTH, description: 'The token a caller presented to the service: a user token, an API token or an app token.' }),
    token_type_hint: Type.Optional(
      Type.Union(['access_token', 'refresh_token', 'user', 'api_token', 'app_token'].map((hint) => Type.Literal(hint)), {
        description: 'Accepted and ignored (RFC 7662): every kind of token is looked up.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Epoch = (description: string) => Type.Integer({ minimum: 0, maximum: 253402300799, description });

const IntrospectionResponse = Type.Object(
  {
    active: Type.Boolean({ description: 'False for anything that is not a valid token right now; the answer is then `{"active":false}` and nothing more.' }),
    token_type: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('api_token'), Type.Literal('app_token')])),
    sub: Type.Optional({ ...Uuid, description: 'The user the token acts for.' }),
    username: Type.Optional(Type.String({ maxLength: 39, examples: ['ada'] })),
    scope: Type.Optional(Type.String({ maxLength: 60_000, description: 'Space-separated scopes, built-in and platform ones; `*` for a user token.', examples: ['apps:read games:publish'] })),
    jti: Type.Optional({ ...Uuid, description: 'The token id, or the session id of a user token.' }),
    iat: Type.Optional(Epoch('When the token was issued, in seconds since the epoch.')),
    exp: Type.Optional(Epoch('When the token expires, in seconds since the epoch; absent when it never does.')),
    iss: Type.Optional(Type.String({ maxLength: 256, examples: ['rz-auth'] })),
    client_id: Type.Optional({ ...Uuid, description: 'The app id, for app tokens only.' }),
  },
  { additionalProperties: false },
);

/** `POST /api/introspect` (RFC 7662), for the platform's services. */
export function introspectionRoutes(app: Http, introspector: Introspector): void {
  app.post('/api/introspect', {
    config: { auth: { service: true } },
    schema: {
      operationId: 'introspectToken',
      tags: ['platform services'],
      summary: 'Introspect a token (RFC 7662)',
      description:
        'Needs a service credential (`rzs_`). Answers whether a token is valid at this moment, exactly as GET /api/me would, and whose it is. ' +
        'Anything that is not a valid token (malformed, unknown, revoked, expired, logged out, another kind of credential) is `{"active":false}`, the same bytes whatever the reason. ' +
        'The body is a form (`token=...`) or JSON (`{"token":"..."}`). Limited per service credential (policy `service`).',
      security: [security.service],
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: IntrospectBody,
      response: {
        ...responses(
          { 200: { ...IntrospectionResponse, description: 'The answer about the token; never cached (`Cache-Control: no-store`).' } },
          'validation_failed',
          'unauthorized',
          'invalid_token',
          'insufficient_scope',
          'unsupported_media_type',
          'payload_too_large',
        ),
        default: DEFAULT_PROBLEM,
      },
    },
    handler: async (request) => introspector.introspect(request.body.token),
  });
}
