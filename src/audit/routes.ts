import { Type } from 'typebox';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import { Amr, AMR_DESCRIPTION, Timestamp, Uuid } from '../api/schemas.js';
import { MAX_USER_AGENT } from '../lib/user-agent.js';
import { AUDIT_TYPES } from './events.js';
import { MAIL_TEMPLATES } from '../mail/outbox.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../lib/pages.js';
import { type AuditLog, MAX_CURSOR_LENGTH } from './service.js';
import { toAuditJson } from './json.js';

const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ maxLength: 8, description: `Events per page, 1 to ${MAX_PAGE}; ${DEFAULT_PAGE} by default.`, examples: ['50'] })),
    cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_LENGTH, description: 'The `next_cursor` of the previous page.', examples: ['YTEyMw'] })),
    type: Type.Optional(Type.Enum([...AUDIT_TYPES], { description: 'Only events of this type.' })),
  },
  { additionalProperties: false },
);

const NullableId = Type.Union([Type.String({ maxLength: 36 }), Type.Null()]);

/*
 * What an event's details may hold, each optional: the response schema keeps anything else off the
 * wire. A new kind of detail is one line here.
 */
const Details = Type.Object(
  {
    token_type: Type.Optional(Type.Enum(['api_token', 'app_token', 'service_credential'])),
    app_id: Type.Optional(Uuid),
    name: Type.Optional(Type.String({ maxLength: 100 })),
    scopes: Type.Optional(Type.Array(Type.String({ maxLength: 98 }), { maxItems: 600 })),
    expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()])),
    immediate: Type.Optional(Type.Boolean()),
    hint: Type.Optional(Type.String({ maxLength: 8, description: 'The prefix and last four characters of the token, as lists show it.' })),
    report_format: Type.Optional(Type.Enum(['list', 'github'], { description: "How a leak was reported: a list of strings, or GitHub secret scanning's format." })),
    verified: Type.Optional(Type.Boolean({ description: "true when a report in GitHub's format carried GitHub's valid signature; absent when it did not." })),
    consecutive_failures: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'webhook.paused: failed attempts in a row.' })),
    paused_until: Type.Optional(Type.Union([Timestamp, Type.Null()], { description: 'webhook.paused: when one delivery is tried again.' })),
    allowed_cidrs: Type.Optional(Type.Array(Type.String({ maxLength: 43 }), { maxItems: 20, description: 'The networks a token is limited to, after a PATCH.' })),
    reason: Type.Optional(
      Type.Enum(['ended', 'others_ended', 'password_changed', 'password_reset', 'email_changed', 'rotated_again', 'rotation_grace_ended', 'lifetime_ended', 'malformed', 'mismatch', 'replayed', 'factor_removed', 'mfa_reset', 'no_challenge', 'unknown_credential', 'other_user', 'invalid', 'clone_suspected'], {
        description:
          'Why a session or token ended: by itself, with every other, by a password change, by a password reset, by an email change, by a second rotation, at the end of its rotation grace, at its own expiry, by a removed second factor, by an operator reset of the second factors. Why a second factor or a passkey login was refused (mfa.challenge_failed, login.failed): not a code at all, a wrong code, a right code already used (a replay); for WebAuthn no valid challenge for this ceremony (unknown, used, expired, another user\'s or purpose\'s), an unknown credential, a credential of another user or a user handle not its owner\'s, a failed verification (origin, RP ID, type, flags, signature), a signature counter that did not grow (mfa.clone_suspected).',
      }),
    ),
    sessions_ended: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'How many sessions a password change, reset, email change, removed second factor or operator reset ended.' })),
    factors_removed: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 2_147_483_647, description: 'mfa.reset_by_operator: how many second factors the reset removed.' })),
    new_token_id: Type.Optional(Uuid),
    client_id: Type.Optional(Type.String({ maxLength: 40, description: 'The device flow\'s client (docs/device-flow.md).' })),
    device_name: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'The name a device reported for itself, unverified.' })),
    request_ip: Type.Optional(Type.String({ maxLength: 64, description: 'The address a device login was requested from.' })),
    expires_in_days: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 36_500, description: 'device.approved: the lifetime chosen for the token.' })),
    via: Type.Optional(Type.Enum(['self'], { description: 'token.revoked: `self` when the token revoked itself (POST /oauth/revoke).' })),
    grace_seconds: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 604_800 })),
    idle_days: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 36_500, description: 'TOKEN_IDLE_REVOKE_DAYS when the token was revoked.' })),
    refusals: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 2_147_483_647, description: 'Requests refused by the allow-list since the previous token.refused of this token.' })),
    last_refused_at: Type.Optional(Timestamp),
    days: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: 7, description: 'token.expiring: the token expires within this many days (7 or 1).' })),
    origin: Type.Optional(Type.String({ maxLength: 2048, description: "A webhook endpoint's scheme, host and port (its path is not recorded: it may hold a secret); `device_flow` for a token issued to a CLI by a device login." })),
    amr: Type.Optional({ ...Amr, description: `login.succeeded: how the user authenticated. ${AMR_DESCRIPTION}` }),
    method: Type.Optional(Type.Enum(['totp', 'webauthn', 'recovery_code', 'passkey'], { description: 'The second factor tried or used; `passkey` for a refused passkey login (login.failed).' })),
    factor_id: Type.Optional({ ...Uuid, description: 'mfa.clone_suspected: the factor flagged.' }),
    sign_count: Type.Optional(Type.Integer({ format: 'int64', minimum: 0, maximum: 4_294_967_295, description: 'mfa.clone_suspected: the signature counter the refused assertion carried, not greater than the stored one.' })),
    recovery_codes_remaining: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 10, description: 'mfa.recovery_code_used: unused codes left.' })),
    locked_until: Type.Optional({ ...Timestamp, description: 'mfa.locked: until when every second-factor check of the user is refused.' }),
    event_types: Type.Optional(Type.Array(Type.Enum([...AUDIT_TYPES]), { maxItems: AUDIT_TYPES.length, description: 'The event types a webhook endpoint receives.' })),
    template: Type.Optional(Type.Enum([...MAIL_TEMPLATES], { description: 'mail.failed: which mail could not be delivered.' })),
  },
  { additionalProperties: false, description: 'Facts about the event; never a secret.' },
);

export const AuditEventSchema = Type.Object(
  {
    id: Uuid,
    type: Type.Enum([...AUDIT_TYPES]),
    occurred_at: Timestamp,
    actor: Type.Object(
      {
        type: Type.Enum(['user', 'api_token', 'app_token', 'anonymous', 'operator', 'system']),
        id: Type.Union([Type.String({ maxLength: 36, description: 'The user id for a user token, the token id for an API or app token.' }), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    subject: Type.Union([
      Type.Object(
        { type: Type.Enum(['user', 'session', 'token', 'app', 'signing_key', 'service_credential', 'webhook', 'oauth_client', 'device_request']), id: Type.String({ maxLength: 40 }) },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    ip: Type.Union([Type.String({ maxLength: 64, description: 'The client address, as rate limits see it (TRUST_PROXY).' }), Type.Null()]),
    user_agent: Type.Union([Type.String({ maxLength: MAX_USER_AGENT, description: 'Read as UTF-8, token shapes redacted, control characters removed, cut to 256 characters.' }), Type.Null()]),
    request_id: NullableId,
    details: Details,
  },
  { additionalProperties: false },
);

/** GET /api/audit: the caller's own security events. */
export function auditRoutes(app: Http, log: AuditLog): void {
  app.get('/api/audit', {
    ...operation({
      method: 'GET',
      operationId: 'listAuditEvents',
      tags: ['audit'],
      summary: 'List the security events of your account, newest first',
      description:
        'Needs a user token (API and app tokens get 403). Logins, failed logins, logouts, token and app changes, leak reports: see docs/audit-log.md. ' +
        'Page with `next_cursor`; it is null on the last page. A bad `limit`, `cursor` or `type` is 400 naming it.',
      auth: USER_TOKEN_ONLY,
      querystring: AuditQuery,
      success: {
        200: {
          description: 'A page of your events.',
          schema: Type.Object(
            { events: Type.Array(AuditEventSchema, { maxItems: MAX_PAGE }), next_cursor: Type.Union([Type.String({ maxLength: MAX_CURSOR_LENGTH }), Type.Null()]) },
            { additionalProperties: false },
          ),
        },
      },
    }),
    handler: async (request) => {
      const page = await log.page(principalOf(request).user.id, request.query);
      return { events: page.events.map(toAuditJson), next_cursor: page.nextCursor };
    },
  });
}
