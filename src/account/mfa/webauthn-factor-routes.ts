import { Type } from 'typebox';
import { contextOf } from '../../api/context.js';
import { operation } from '../../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../../api/route.js';
import { Uuid } from '../../api/schemas.js';
import { Factor, Name, RecoveryCodes, STEP_UP, toFactor, WRITE_PROBLEMS } from './factor-routes.js';
import type { WebAuthnEnrolment } from './webauthn-enrolment.js';
import { CreationOptions, RegistrationCredential, registrationResponse } from './webauthn-schemas.js';

const ChallengeId = { ...Uuid, description: 'Names the challenge of these options; it works once, for 5 minutes.' };

/** Adding a passkey or security key to the signed-in user (contract §12.3). */
export function webauthnFactorRoutes(app: Http, enrolment: WebAuthnEnrolment): void {
  app.post('/api/me/mfa/webauthn/options', {
    ...operation({
      method: 'POST',
      operationId: 'createWebAuthnRegistrationOptions',
      tags: ['account'],
      summary: 'Start adding a passkey or security key',
      description: `Creation options for \`navigator.credentials.create()\`: EdDSA, ES256 or RS256, no attestation, the user's credentials excluded, a 32-byte challenge that works once within 5 minutes. 403 \`forbidden\` when passkeys are off on this server. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      success: {
        200: {
          description: 'The options, and the id of their challenge for POST /api/me/mfa/webauthn.',
          schema: Type.Object({ challenge_id: ChallengeId, options: CreationOptions }, { additionalProperties: false }),
        },
      },
      problems: [...WRITE_PROBLEMS, 'forbidden'],
    }),
    handler: async (request) => {
      const { challengeId, options } = await enrolment.options(principalOf(request));
      return { challenge_id: challengeId, options };
    },
  });

  app.post('/api/me/mfa/webauthn', {
    ...operation({
      method: 'POST',
      operationId: 'registerWebAuthnFactor',
      tags: ['account'],
      summary: 'Add a passkey or security key',
      description: `Registers the credential of a creation ceremony started with POST /api/me/mfa/webauthn/options; its challenge is spent whatever the outcome. A credential that does not verify (origin, RP ID, challenge, an algorithm outside EdDSA/ES256/RS256, the user-presence flag) is 400 \`validation_failed\` naming \`credential\`; a credential id registered already, to anyone, is 409 \`conflict\`, as is a 21st. The user's first factor comes with the first recovery codes, shown once. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      body: Type.Object({ challenge_id: Type.String({ maxLength: 36, description: 'From the options.' }), name: Name, credential: RegistrationCredential }, { additionalProperties: false }),
      success: {
        201: {
          description: 'Active.',
          schema: Type.Object({ factor: Factor, recovery_codes: Type.Optional(RecoveryCodes) }, { additionalProperties: false }),
        },
      },
      problems: [...WRITE_PROBLEMS, 'forbidden', 'conflict'],
    }),
    handler: async (request, reply) => {
      const { challenge_id: challengeId, name, credential } = request.body;
      const { factor, recoveryCodes } = await enrolment.register(principalOf(request), challengeId, name, registrationResponse(credential), contextOf(request));
      return reply.code(201).send({ factor: toFactor(factor), ...(recoveryCodes ? { recovery_codes: recoveryCodes } : {}) });
    },
  });
}
