import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../api/route.js';
import { ProblemError } from '../errors.js';

/**
 * EMAIL_VERIFICATION_REQUIRED (docs/email.md): every route declared `mintsToken` refuses a user
 * whose email is unproven with 403 `email_unverified`, whatever token they call it with. The
 * hook is attached to those routes only, and only when the setting is on.
 */
export function registerEmailVerification(app: FastifyInstance, required: boolean): void {
  if (!required) return;
  app.addHook('onRoute', (route) => {
    if (!route.config?.mintsToken) return;
    route.preHandler = [
      ...[route.preHandler ?? []].flat(),
      async (request: FastifyRequest) => {
        if (!principalOf(request).user.emailVerified) throw new ProblemError('email_unverified');
      },
    ];
  });
}
