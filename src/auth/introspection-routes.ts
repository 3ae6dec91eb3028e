import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import { type Http, serviceOf } from '../api/route.js';
import type { IntrospectionMetrics } from '../observability/metrics/auth.js';
import { AllowedCidrs, Amr, AMR_DESCRIPTION, UserSummary, Uuid } from '../api/schemas.js';
import type { Introspector } from './introspection.js';

/** As much as a body holds: a string of any length is a token to answer, `{"active":false}` if malformed. */
const MAX_TOKEN_LENGTH = 16 * 1024;

const IntrospectBody = Type.Object(
  {
    token: Type.String({ maxLength: MAX_TOKEN_LENGTH, description: 'The token a caller presented to the service: a user token, an API token or an app token.' }),
    token_type_hint: Type.Optional(
      Type.Enum(['access_token', 'refresh_token', 'user', 'api_token', 'app_token'], {
        description: 'Accepted and ignored (RFC 7662): every kind of token is looked up.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Seconds since the epoch, up to the last second of year 9999. */
const Epoch = (description: string) => Type.Integer({ format: 'int64', minimum: 0, maximum: 253402300799, description, examples: [1795618855] });

const IntrospectionResponse = Type.Object(
  {
    active: Type.Boolean({ description: 'False for anything that is not a valid token right now; the answer is then `{"active":false}` and nothing more.' }),
    token_type: Type.Optional(Type.Enum(['user', 'api_token', 'app_token'])),
    sub: Type.Optional(Type.String({ ...Uuid, description: 'The user the token acts for.' })),
    username: Type.Optional(UserSummary.properties.username),
    scope: Type.Optional(Type.String({ maxLength: 60_000, description: 'Space-separated scopes, built-in and platform ones; `*` for a user token.', examples: ['apps:read games:publish'] })),
    jti: Type.Optional(Type.String({ ...Uuid, description: 'The token id, or the session id of a user token.' })),
    iat: Type.Optional(Epoch('When the token was issued, in seconds since the epoch.')),
    exp: Type.Optional(Epoch('When the token expires, in seconds since the epoch; absent when it never does.')),
    iss: Type.Optional(Type.String({ maxLength: 256, examples: ['rz-auth'] })),
    client_id: Type.Optional(Type.String({ ...Uuid, description: 'The app id, for app tokens only.' })),
    amr: Type.Optional({ ...Amr, description: `User tokens only. ${AMR_DESCRIPTION}` }),
    auth_time: Type.Optional(Epoch('User tokens only: the last password, second-factor or step-up authentication, in seconds since the epoch.')),
    allowed_cidrs: Type.Optional({
      ...AllowedCidrs,
      description:
        'Present only for a token limited to networks: introspection does not know your caller\'s address, so your service must refuse the token unless its caller\'s address is inside one of them (@rz-auth/verify does).',
    }),
    derived: Type.Optional(Type.Boolean({ description: 'True for a derived child (`rzd_`): `jti` is then its child id, `iat` the child\'s, `exp` and `scope` the effective ones (docs/derived-tokens.md).' })),
    parent_id: Type.Optional(Type.String({ ...Uuid, description: 'Derived children only: the id of the API or app token it was derived from.' })),
    aud: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20, description: 'Derived children with an `aud` caveat only: the effective audience (your credential\'s name is in it).' })),
  },
  { additionalProperties: false },
);

/** `POST /api/introspect` (RFC 7662), for the platform's services. */
export function introspectionRoutes(app: Http, introspector: Introspector, metrics: IntrospectionMetrics | null = null): void {
  app.post('/api/introspect', {
    ...operation({
      method: 'POST',
      operationId: 'introspectToken',
      tags: ['platform'],
      summary: 'Introspect a token (RFC 7662)',
      description:
        'Needs a service credential (`rzs_`). Answers whether a token is valid at this moment, exactly as GET /api/me would, and whose it is. ' +
        'Anything that is not a valid token (malformed, unknown, revoked, expired, logged out, another kind of credential) is `{"active":false}`, the same bytes whatever the reason. ' +
        'A token limited to networks is answered with its `allowed_cidrs`, which the service applies to its own caller\'s address. ' +
        'The body is a form (`token=...`) or JSON (`{"token":"..."}`). Limited per service credential (policy `service`).',
      auth: { service: true },
      body: IntrospectBody,
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      success: { 200: { description: 'The answer about the token; never cached (`Cache-Control: no-store`).', schema: IntrospectionResponse } },
    }),
    handler: async (request) => {
      // A derived child names the services that may accept it by their credential's name (contract §14.6).
      if (!metrics) return introspector.introspect(request.body.token, serviceOf(request).name);
      const started = performance.now();
      const answer = await introspector.introspect(request.body.token, serviceOf(request).name);
      metrics.answered(serviceOf(request).name, answer.active, (performance.now() - started) / 1000);
      return answer;
    },
  });
}
