import { type Static, Type } from 'typebox';
import type { Principal } from '../auth/principal.js';
import { iso } from '../clock.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, type RouteAuth } from '../api/route.js';
import { Amr, AMR_DESCRIPTION, Label, NullableTimestamp, Timestamp, UserSummary, Uuid } from '../api/schemas.js';
import { MeDerived } from '../tokens/derived/parents.js';
import { MAX_SCOPE_NAME_LENGTH, MAX_TOKEN_SCOPES, SCOPE_NAME } from '../tokens/scopes.js';

const MeResponse = Type.Object(
  {
    id: Uuid,
    username: UserSummary.properties.username,
    email: Type.Optional(Type.String({ ...UserSummary.properties.email, description: 'Omitted for app tokens, which may ship inside a published app.' })),
    email_verified: Type.Optional(
      Type.Boolean({ description: 'User tokens only: whether the email has been proven by a link mailed to it. Always false when the server sends no mail.' }),
    ),
    auth: Type.Object(
      {
        type: Type.Enum(['user', 'api_token', 'app_token']),
        token_id: Type.String({ ...Uuid, description: 'The session id for a user token, otherwise the token id.' }),
        scopes: Type.Array(Type.String({ pattern: `^(\\*|${SCOPE_NAME})$`, maxLength: MAX_SCOPE_NAME_LENGTH }), {
          uniqueItems: true,
          maxItems: MAX_TOKEN_SCOPES,
          description: '`["*"]` for a user token; the scopes chosen for an API or app token, built-in and platform ones (GET /api/scopes).',
        }),
        expires_at: NullableTimestamp,
        amr: Type.Optional({ ...Amr, description: `User tokens only. ${AMR_DESCRIPTION}` }),
        auth_time: Type.Optional({ ...Timestamp, description: 'User tokens only: the last password, second-factor or step-up authentication.' }),
        derived: Type.Optional(MeDerived),
      },
      { additionalProperties: false },
    ),
    app: Type.Optional(Type.Object({ id: Uuid, name: Label }, { additionalProperties: false, description: 'Only for app tokens.' })),
    mfa: Type.Optional(
      Type.Object(
        {
          required_by: {
            ...Timestamp,
            description: 'MFA_REQUIRED: until when the account may be used without a second factor. Past it, a login gives a token good only for enrolment (docs/mfa.md).',
          },
        },
        { additionalProperties: false, description: 'User tokens only, while the server requires a second factor and the account has none.' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Who may call `GET /api/me`: any valid token. */
const ME_AUTH: RouteAuth = { api: 'any', app: true };

/** The body of `GET /api/me`. */
function meBody(p: Principal): Static<typeof MeResponse> {
  return {
    id: p.user.id,
    username: p.user.username,
    // An app token may ship inside a published game: it must not reveal its owner's email.
    ...(p.type === 'app_token' ? {} : { email: p.user.email }),
    ...(p.type === 'user' ? { email_verified: p.user.emailVerified } : {}),
    auth: {
      type: p.type,
      token_id: p.credentialId,
      scopes: [...p.scopes],
      expires_at: p.expiresAt === null ? null : iso(p.expiresAt),
      ...(p.auth ? { amr: [...p.auth.amr], auth_time: iso(p.auth.authTime) } : {}),
      ...(p.derived ? { derived: { child_id: p.derived.childId, labels: [...p.derived.labels], iat: iso(p.issuedAt), ...(p.derived.aud ? { aud: [...p.derived.aud] } : {}) } } : {}),
    },
    ...(p.app ? { app: { id: p.app.id, name: p.app.name } } : {}),
  };
}

/** Until when a user without a second factor may go on without one (MFA_REQUIRED), null when nothing is required of them. */
export type RequiredBy = (userId: string) => Promise<string | null>;

/**
 * `GET /api/me`: who the caller is and with what credential. `requiredBy` is given only while
 * MFA_REQUIRED is on: otherwise the answer needs no lookup and is sent at once.
 */
export function meRoutes(app: Http, requiredBy: RequiredBy | null = null): void {
  app.get('/api/me', {
    ...operation({
      method: 'GET',
      operationId: 'getMe',
      tags: ['me'],
      summary: 'The caller and the credential in use',
      description:
        'Any valid token. For an app token, `email` is omitted and `app` names the app; for a user token, `email_verified` says whether the email is proven, and `mfa.required_by` until when the account may go without a second factor (MFA_REQUIRED).',
      auth: ME_AUTH,
      success: { 200: { description: 'The caller.', schema: MeResponse } },
    }),
    // Not async: a value returned at once is sent at once, without a promise's turn.
    handler: (request) => {
      const principal = principalOf(request);
      if (requiredBy === null || principal.type !== 'user') return meBody(principal);
      return requiredBy(principal.user.id).then((by) => (by === null ? meBody(principal) : { ...meBody(principal), mfa: { required_by: by } }));
    },
  });
}
