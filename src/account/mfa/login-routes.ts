import type { IncomingMessage } from 'node:http';
import { Type } from 'typebox';
import { contextOf } from '../../api/context.js';
import { operation } from '../../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../../api/route.js';
import { SessionResponse, toResponse } from '../routes.js';
import type { AccountService } from '../service.js';
import { AssertionCredential } from './webauthn-schemas.js';
import type { Mfa } from './wire.js';

const MfaToken = Type.String({ maxLength: 64, description: 'From the `mfa_required` answer of POST /api/auth/login.' });
const Code = Type.String({
  maxLength: 64,
  description: 'TOTP: six ASCII digits (spaces ignored). Recovery code: `XXXX-XXXX-XXXX-XXXX` (case and dashes ignored).',
  examples: ['123 456'],
});
const CodeMethod = Type.Enum(['totp', 'recovery_code'], { description: 'An authenticator app\'s code, or one of the recovery codes.' });
const WebAuthnMethod = Type.Literal('webauthn', { description: 'A passkey or security key: the assertion answering the options of the matching `…/webauthn/options` route.' });

const VerifyBody = Type.Union(
  [
    Type.Object({ mfa_token: MfaToken, method: CodeMethod, code: Code }, { additionalProperties: false }),
    Type.Object({ mfa_token: MfaToken, method: WebAuthnMethod, credential: AssertionCredential }, { additionalProperties: false }),
  ],
  { description: 'A code, or a WebAuthn assertion for the options of POST /api/auth/mfa/webauthn/options.' },
);

const VerifyResponse = Type.Object(
  {
    ...SessionResponse.properties,
    recovery_codes_remaining: Type.Optional(Type.Integer({ format: 'int32', minimum: 0, maximum: 10, description: 'After a recovery code: how many unused codes are left.' })),
  },
  { additionalProperties: false },
);

const ReauthBody = Type.Union(
  [
    Type.Object({ password: Type.String({ maxLength: 4096, description: 'Only for an account without a second factor.' }) }, { additionalProperties: false }),
    Type.Object({ method: CodeMethod, code: Code }, { additionalProperties: false }),
    Type.Object({ method: WebAuthnMethod, credential: AssertionCredential }, { additionalProperties: false }),
  ],
  { description: 'The password (accounts without a second factor), or a second factor.' },
);

const ReauthResponse = Type.Object({ token: SessionResponse.properties.token }, { additionalProperties: false });

/** `POST /api/auth/mfa/verify` (the second step of a login, contract §12.4) and `POST /api/auth/reauth` (step-up, §12.5). */
export function mfaLoginRoutes(app: Http, { login, reauth }: Mfa, accounts: AccountService, clientAddress: (req: IncomingMessage) => string): void {
  app.post('/api/auth/mfa/verify', {
    ...operation({
      method: 'POST',
      operationId: 'logInWithSecondFactor',
      tags: ['auth'],
      summary: 'Finish a login with a second factor',
      description:
        'Redeems the `mfa_token` of a login answered `mfa_required`, once, with a code or a WebAuthn assertion (`amr` `["pwd","hwk","mfa"]`, `swk` for a synced passkey). Every failure is 401 `invalid_credentials` with one body; the token dies after 5 failures or 5 minutes. 10 failed second factors of one account in 15 minutes lock its second-factor checks (429 with Retry-After, the right code included) until the window passes.',
      auth: 'public',
      rateLimit: 'second-factor',
      body: VerifyBody,
      success: { 200: { description: 'Logged in: a user token whose `amr` names the second factor.', schema: VerifyResponse } },
      problems: ['invalid_credentials'],
    }),
    handler: async (request) => {
      const context = contextOf(request);
      const { mfa_token: token, ...factor } = request.body;
      const verified = await login.verify(token, factor, context);
      const grant = await accounts.completeLogin(verified.user, { address: clientAddress(request.raw), userAgent: request.headers['user-agent'] }, verified.amr, context);
      return { ...toResponse(grant), ...(verified.recoveryCodesRemaining === undefined ? {} : { recovery_codes_remaining: verified.recoveryCodesRemaining }) };
    },
  });

  app.post('/api/auth/reauth', {
    ...operation({
      method: 'POST',
      operationId: 'issueFreshToken',
      tags: ['auth'],
      summary: 'Authenticate again for an action that needs a recent login (step-up)',
      description:
        'Answers a new user token for the same session (a WebAuthn assertion answers the options of POST /api/auth/reauth/webauthn/options) with `auth_time` now and the methods just proven in `amr` (RFC 9470). An account with a second factor must use it: the password alone is 401 `invalid_credentials` and issues nothing. Failures are 401 `invalid_credentials` and count against the per-account second-factor limit.',
      auth: USER_TOKEN_ONLY,
      rateLimit: 'password',
      body: ReauthBody,
      success: { 200: { description: 'A fresh user token for the same session.', schema: ReauthResponse } },
      problems: ['invalid_credentials'],
    }),
    handler: async (request) => ({ token: await reauth.reauth(principalOf(request), request.body, contextOf(request)) }),
  });
}
