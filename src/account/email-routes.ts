import { Type } from 'typebox';
import { contextOf } from '../api/context.js';
import { operation } from '../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../api/route.js';
import type { EmailFlows } from './email-service.js';

/*
 * Verification, password reset and email change (docs/email.md). With mail off (no SMTP_URL)
 * every one of these routes answers 404, as if it did not exist (the service says so).
 */

const Email = Type.String({
  maxLength: 320,
  description: 'A plain mailbox (`name@example.com`): trimmed, lower-cased and brought to Unicode NFC; at most 254 characters after that.',
  examples: ['ada@example.com'],
});
const Password = Type.String({ maxLength: 4096, examples: ['correct horse battery staple'] });

/**
 * Any string: a link token that is malformed, unknown, used, expired or of another purpose is one
 * answer, 400 `invalid_link`, never a validation error that would tell the cases apart.
 */
const LinkToken = Type.String({
  maxLength: 256,
  description: 'The token from the link\'s fragment (`#reset=<token>`): `rzl_` and 43 characters.',
  examples: ['rzl_2s6bK0nY1uQeTzq3m8hXw9cVfRdLpA4gJ7oNiE5kUyS'],
});

const LinkBody = Type.Object({ token: LinkToken }, { additionalProperties: false });

const ResetRequest = Type.Object({ email: Email }, { additionalProperties: false });

const ResetConfirm = Type.Object(
  {
    token: LinkToken,
    new_password: Type.String({
      ...Password,
      description: 'The same rules as at signup: at least 15 characters by default, at most 1024 bytes, not a common password.',
      examples: ['a new and much longer passphrase'],
    }),
  },
  { additionalProperties: false },
);

const EmailChange = Type.Object(
  { email: Email, password: Type.String({ ...Password, description: 'The account\'s password, to confirm.' }) },
  { additionalProperties: false },
);

/** The one body of every 202 here: the same whatever happened, so it reveals nothing. */
const Accepted = Type.Object(
  { status: Type.Enum(['accepted'], { description: 'Always the same, whether or not a mail was queued.' }) },
  { additionalProperties: false },
);
const ACCEPTED = { status: 'accepted' } as const;

/** The account's email flows: verification, password reset, email change. */
export function emailRoutes(app: Http, flows: EmailFlows): void {
  app.post('/api/auth/verify-email', {
    ...operation({
      method: 'POST',
      operationId: 'requestEmailVerification',
      tags: ['account'],
      summary: 'Send a new verification mail',
      description:
        'Queues a mail with a new verification link to the account\'s address; the link of any earlier mail stops working. Already verified: 409 `conflict`. At most 5 per user per hour by default (the signup mail is not counted). 404 when the server sends no mail.',
      auth: USER_TOKEN_ONLY,
      rateLimit: 'verify-email',
      success: { 202: { description: 'Queued.', schema: Accepted } },
      problems: ['conflict', 'not_found'],
    }),
    handler: async (request, reply) => {
      await flows.requestVerification(principalOf(request), contextOf(request));
      return reply.code(202).send(ACCEPTED);
    },
  });

  app.post('/api/auth/verify-email/confirm', {
    ...operation({
      method: 'POST',
      operationId: 'confirmEmailVerification',
      tags: ['auth'],
      summary: 'Verify the email with the token of a verification link',
      description:
        'No authentication: the token is the proof. A token that is unknown, used, expired, replaced by a newer link or of another purpose is 400 `invalid_link`, one body for all. 404 when the server sends no mail.',
      auth: 'public',
      rateLimit: 'address',
      body: LinkBody,
      success: { 204: { description: 'The email is verified.' } },
      problems: ['invalid_link', 'not_found'],
    }),
    handler: async (request, reply) => {
      await flows.confirmVerification(request.body.token, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/api/auth/password-reset', {
    ...operation({
      method: 'POST',
      operationId: 'requestPasswordReset',
      tags: ['auth'],
      summary: 'Ask for a password reset link',
      description:
        'Always 202 with the same body and timing, whether or not an account has this email; when one has, a mail with a reset link is queued and any earlier reset link stops working. Limited per client address and per submitted email. 404 when the server sends no mail.',
      auth: 'public',
      rateLimit: 'password-reset',
      body: ResetRequest,
      success: { 202: { description: 'Accepted (whether or not the account exists).', schema: Accepted } },
      problems: ['not_found'],
    }),
    handler: async (request, reply) => {
      await flows.requestPasswordReset(request.body.email, contextOf(request));
      return reply.code(202).send(ACCEPTED);
    },
  });

  app.post('/api/auth/password-reset/confirm', {
    ...operation({
      method: 'POST',
      operationId: 'confirmPasswordReset',
      tags: ['auth'],
      summary: 'Set a new password with the token of a reset link',
      description:
        'No authentication: the token is the proof. Every session of the user ends at once, on every instance; API and app tokens stay; the email counts as verified. A bad token is 400 `invalid_link`; a password that breaks the rules is 400 `validation_failed` naming `new_password` (the link stays usable). 404 when the server sends no mail.',
      auth: 'public',
      rateLimit: 'address',
      body: ResetConfirm,
      success: { 204: { description: 'The password is changed and every session has ended.' } },
      problems: ['invalid_link', 'not_found'],
    }),
    handler: async (request, reply) => {
      await flows.confirmPasswordReset(request.body.token, request.body.new_password, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/api/me/email', {
    ...operation({
      method: 'POST',
      operationId: 'requestEmailChange',
      tags: ['account'],
      summary: 'Ask to change the email address',
      description:
        'Needs the password (a wrong one is 401 `invalid_credentials` and counts against the login limits). Queues a confirmation link to the new address and a notice to the current one; nothing changes until the link is used. 202 even when the address is taken (the confirmation then answers 409). 404 when the server sends no mail.',
      auth: USER_TOKEN_ONLY,
      rateLimit: 'password',
      body: EmailChange,
      success: { 202: { description: 'Queued.', schema: Accepted } },
      problems: ['invalid_credentials', 'not_found'],
    }),
    handler: async (request, reply) => {
      await flows.requestEmailChange(principalOf(request), request.body.email, request.body.password, contextOf(request));
      return reply.code(202).send(ACCEPTED);
    },
  });

  app.post('/api/me/email/confirm', {
    ...operation({
      method: 'POST',
      operationId: 'confirmEmailChange',
      tags: ['account'],
      summary: 'Change the email with the token of a confirmation link',
      description:
        'No authentication: the token, mailed to the new address, is the proof. The email changes and is verified; every session of the user ends but the one that asked for the change. A bad token is 400 `invalid_link`; an address taken meanwhile is 409 `conflict`. 404 when the server sends no mail.',
      auth: 'public',
      rateLimit: 'address',
      body: LinkBody,
      success: { 204: { description: 'The email is changed.' } },
      problems: ['invalid_link', 'conflict', 'not_found'],
    }),
    handler: async (request, reply) => {
      await flows.confirmEmailChange(request.body.token, contextOf(request));
      return reply.code(204).send(null);
    },
  });
}
