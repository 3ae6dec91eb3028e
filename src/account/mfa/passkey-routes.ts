import type { IncomingMessage } from 'node:http';
import { Type } from 'typebox';
import { contextOf } from '../../api/context.js';
import { operation } from '../../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../../api/route.js';
import { Uuid } from '../../api/schemas.js';
import { SessionResponse, toResponse } from '../routes.js';
import type { AccountService } from '../service.js';
import { AssertionCredential, RequestOptions } from './webauthn-schemas.js';
import type { Mfa } from './wire.js';

const OptionsResponse = Type.Object({ options: RequestOptions }, { additionalProperties: false });
const OFF = '403 `forbidden` when passkeys are off on this server.';

/**
 * The WebAuthn ceremonies of login and step-up (contract §12.4, §12.5): options for the second step
 * of a login and for step-up (the assertions go to POST /api/auth/mfa/verify and POST
 * /api/auth/reauth), and the passkey login, which needs no password.
 */
export function passkeyRoutes(app: Http, { login, reauth, passkey }: Mfa, accounts: AccountService, clientAddress: (req: IncomingMessage) => string): void {
  app.post('/api/auth/mfa/webauthn/options', {
    ...operation({
      method: 'POST',
      operationId: 'createSecondFactorWebAuthnOptions',
      tags: ['auth'],
      summary: 'Request options for the second step of a login with a passkey or security key',
      description: `Request options listing the user's credentials, under a challenge bound to the user that works once within 5 minutes; send the assertion to POST /api/auth/mfa/verify with method \`webauthn\`. Spends none of the \`mfa_token\`'s attempts. An \`mfa_token\` that could not be redeemed is 401 \`invalid_credentials\`. ${OFF}`,
      auth: 'public',
      rateLimit: 'second-factor',
      body: Type.Object({ mfa_token: Type.String({ maxLength: 64, description: 'From the `mfa_required` answer of POST /api/auth/login.' }) }, { additionalProperties: false }),
      success: { 200: { description: 'The options.', schema: OptionsResponse } },
      problems: ['invalid_credentials', 'forbidden'],
    }),
    handler: async (request) => ({ options: await login.webauthnOptions(request.body.mfa_token) }),
  });

  app.post('/api/auth/passkey/options', {
    ...operation({
      method: 'POST',
      operationId: 'createPasskeyLoginOptions',
      tags: ['auth'],
      summary: 'Start a login with a passkey',
      description: `Request options without a credential list (the authenticator offers its passkeys) and with user verification required, under a challenge named by \`challenge_id\` that works once within 5 minutes. 20 per minute per client address. ${OFF}`,
      auth: 'public',
      rateLimit: 'passkey-options',
      optionalBody: true,
      body: Type.Object({}, { additionalProperties: false }),
      success: {
        200: {
          description: 'The options, and the id of their challenge for POST /api/auth/passkey/login.',
          schema: Type.Object({ challenge_id: Uuid, options: RequestOptions }, { additionalProperties: false }),
        },
      },
      problems: ['forbidden'],
    }),
    handler: async () => {
      const { challengeId, options } = await passkey.options();
      return { challenge_id: challengeId, options };
    },
  });

  app.post('/api/auth/passkey/login', {
    ...operation({
      method: 'POST',
      operationId: 'logInWithPasskey',
      tags: ['auth'],
      summary: 'Log in with a passkey',
      description:
        'The user is the credential\'s owner; the user handle must be theirs and the authenticator must have verified the user (UV). Every failure is 401 `invalid_credentials` with the body of a wrong password. The token\'s `amr` is `["hwk","user","mfa"]`, `swk` for a synced passkey.',
      auth: 'public',
      rateLimit: 'second-factor',
      body: Type.Object({ challenge_id: Type.String({ maxLength: 36, description: 'From POST /api/auth/passkey/options.' }), credential: AssertionCredential }, { additionalProperties: false }),
      success: { 200: { description: 'Logged in.', schema: SessionResponse } },
      problems: ['invalid_credentials'],
    }),
    handler: async (request) => {
      const context = contextOf(request);
      const verified = await passkey.login(request.body.challenge_id, request.body.credential, context);
      return toResponse(await accounts.completeLogin(verified.user, { address: clientAddress(request.raw), userAgent: request.headers['user-agent'] }, verified.amr, context));
    },
  });

  app.post('/api/auth/reauth/webauthn/options', {
    ...operation({
      method: 'POST',
      operationId: 'createReauthWebAuthnOptions',
      tags: ['auth'],
      summary: 'Request options for step-up with a passkey or security key',
      description: `Request options listing the user's credentials, under a challenge bound to the user and to step-up that works once within 5 minutes; send the assertion to POST /api/auth/reauth with method \`webauthn\`. ${OFF}`,
      auth: USER_TOKEN_ONLY,
      success: { 200: { description: 'The options.', schema: OptionsResponse } },
      problems: ['forbidden'],
    }),
    handler: async (request) => ({ options: await reauth.webauthnOptions(principalOf(request)) }),
  });
}
