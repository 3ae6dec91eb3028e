import { Type } from 'typebox';
import { contextOf } from '../../api/context.js';
import { operation } from '../../api/operation.js';
import { type Http, principalOf, USER_TOKEN_ONLY } from '../../api/route.js';
import { IdParams, NullableTimestamp, Timestamp, Uuid } from '../../api/schemas.js';
import type { FactorService } from './factor-service.js';
import type { FactorSummary } from './factor-store.js';

export const Name = Type.String({ minLength: 1, maxLength: 60, examples: ['Phone'] });
export const RecoveryCodes = Type.Array(Type.String({ pattern: '^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$', maxLength: 19 }), {
  minItems: 10,
  maxItems: 10,
  description: 'Shown once: each works once, case and dashes ignored.',
});

export const Factor = Type.Object(
  {
    id: Uuid,
    type: Type.Enum(['totp', 'webauthn']),
    name: Type.String({ maxLength: 60 }),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    passkey: Type.Boolean({ description: 'A discoverable credential that verified the user: it can sign in without a password.' }),
    synced: Type.Boolean({ description: 'The credential may be synced across devices (backup-eligible).' }),
  },
  { additionalProperties: false },
);

export const toFactor = (f: FactorSummary) => ({ id: f.id, type: f.type, name: f.name, created_at: f.createdAt, last_used_at: f.lastUsedAt, passkey: f.passkey, synced: f.synced });

const FactorParams = Type.Object({ factor_id: IdParams.properties.id }, { additionalProperties: false });
export const STEP_UP = 'Needs a recent login (step-up, docs/mfa.md), also from an account without a second factor.';
export const WRITE_PROBLEMS = ['insufficient_user_authentication'] as const;

/** The signed-in user's second factors and recovery codes (contract §12.3). */
export function factorRoutes(app: Http, service: FactorService): void {
  app.get('/api/me/mfa', {
    ...operation({
      method: 'GET',
      operationId: 'listSecondFactors',
      tags: ['account'],
      summary: 'List the second factors of the user',
      description: 'Never a secret or a public key. `required_by`: while MFA_REQUIRED gives an account without a factor a grace period, its end.',
      auth: USER_TOKEN_ONLY,
      success: {
        200: {
          description: 'The factors, oldest first.',
          schema: Type.Object(
            { factors: Type.Array(Factor, { maxItems: 30 }), recovery_codes_remaining: Type.Integer({ format: 'int32', minimum: 0, maximum: 10 }), required_by: NullableTimestamp },
            { additionalProperties: false },
          ),
        },
      },
    }),
    handler: async (request) => {
      const listed = await service.list(principalOf(request));
      return { factors: listed.factors.map(toFactor), recovery_codes_remaining: listed.remaining, required_by: listed.requiredBy };
    },
  });

  app.post('/api/me/mfa/totp', {
    ...operation({
      method: 'POST',
      operationId: 'createTotpFactor',
      tags: ['account'],
      summary: 'Start adding an authenticator app',
      description: `The secret is shown once. The factor waits 15 minutes for its first code (confirm); a newer start replaces it. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      success: {
        201: {
          description: 'Waiting for its first code.',
          schema: Type.Object(
            {
              factor_id: Uuid,
              secret: Type.String({ minLength: 32, maxLength: 32, pattern: '^[A-Z2-7]{32}$', description: 'Base32 (RFC 4648), 160 bits.' }),
              otpauth_uri: Type.String({ maxLength: 512, description: 'For a QR code: otpauth://totp/<issuer>:<username>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30' }),
            },
            { additionalProperties: false },
          ),
        },
      },
      problems: [...WRITE_PROBLEMS, 'forbidden'],
    }),
    handler: async (request, reply) => {
      const started = await service.startTotp(principalOf(request));
      return reply.code(201).send({ factor_id: started.factorId, secret: started.secret, otpauth_uri: started.uri });
    },
  });

  app.post('/api/me/mfa/totp/:factor_id/confirm', {
    ...operation({
      method: 'POST',
      operationId: 'updateTotpFactorConfirmed',
      tags: ['account'],
      summary: 'Confirm an authenticator app with its first code',
      description: `A wrong code is 401 \`invalid_credentials\` and counts against the account's second-factor limit. The first factor comes with the first recovery codes, shown once. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      params: FactorParams,
      body: Type.Object({ code: Type.String({ maxLength: 64, examples: ['123456'] }), name: Type.Optional(Name) }, { additionalProperties: false }),
      success: {
        200: {
          description: 'Active.',
          schema: Type.Object({ factor: Factor, recovery_codes: Type.Optional(RecoveryCodes) }, { additionalProperties: false }),
        },
      },
      problems: [...WRITE_PROBLEMS, 'invalid_credentials', 'conflict'],
    }),
    handler: async (request) => {
      const { factor, recoveryCodes } = await service.confirmTotp(principalOf(request), request.params.factor_id, request.body.code, request.body.name, contextOf(request));
      return { factor: toFactor(factor), ...(recoveryCodes ? { recovery_codes: recoveryCodes } : {}) };
    },
  });

  app.patch('/api/me/mfa/:id', {
    ...operation({
      method: 'PATCH',
      operationId: 'updateSecondFactor',
      tags: ['account'],
      summary: 'Rename a second factor',
      description: STEP_UP,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      body: Type.Object({ name: Name }, { additionalProperties: false }),
      success: { 200: { description: 'Renamed.', schema: Factor } },
      problems: [...WRITE_PROBLEMS],
    }),
    handler: async (request) => toFactor(await service.rename(principalOf(request), request.params.id, request.body.name)),
  });

  app.delete('/api/me/mfa/:id', {
    ...operation({
      method: 'DELETE',
      operationId: 'deleteSecondFactor',
      tags: ['account'],
      summary: 'Remove a second factor',
      description: `Ends every other session of the user. The last factor while MFA_REQUIRED is 409 \`conflict\`. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      params: IdParams,
      success: { 204: { description: 'Removed.' } },
      problems: [...WRITE_PROBLEMS, 'conflict'],
    }),
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id, contextOf(request));
      return reply.code(204).send(null);
    },
  });

  app.post('/api/me/mfa/recovery-codes', {
    ...operation({
      method: 'POST',
      operationId: 'createRecoveryCodes',
      tags: ['account'],
      summary: 'Generate new recovery codes',
      description: `Ten new codes, shown once; the previous set stops working. ${STEP_UP}`,
      auth: USER_TOKEN_ONLY,
      success: { 200: { description: 'The new set.', schema: Type.Object({ recovery_codes: RecoveryCodes }, { additionalProperties: false }) } },
      problems: [...WRITE_PROBLEMS],
    }),
    handler: async (request) => ({ recovery_codes: await service.regenerate(principalOf(request), contextOf(request)) }),
  });
}
