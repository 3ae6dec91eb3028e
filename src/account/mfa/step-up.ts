import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { STEP_UP_OPERATIONS } from '../../api/step-up-operations.js';
import type { AuthDecisions } from '../../observability/metrics/auth.js';
import type { FactorStore } from './factor-store.js';

/** RFC 8176 methods that prove a second factor (contract §12.5). */
const STRONG = new Set(['otp', 'hwk', 'swk']);

export interface StepUpDeps {
  readonly factors: FactorStore;
  readonly clock: Clock;
  /** REAUTH_MAX_AGE_S. */
  readonly maxAgeS: number;
  /** STEP_UP_ALL_USERS: freshness also for users without a factor. */
  readonly allUsers: boolean;
}

/**
 * RFC 9470 step-up: a user token on a listed route must be recent (`auth_time` within
 * REAUTH_MAX_AGE_S) and, for a user with a factor, carry one in `amr`. Users without a factor are
 * unaffected unless STEP_UP_ALL_USERS (then freshness alone).
 */
export class StepUp {
  constructor(private readonly deps: StepUpDeps) {}

  /** The RFC 9470 challenge: 401 `insufficient_user_authentication` with `max_age`. */
  challenge(): ProblemError {
    const header = `Bearer realm="rz", error="insufficient_user_authentication", max_age="${this.deps.maxAgeS}"`;
    return new ProblemError('insufficient_user_authentication', { headers: { 'www-authenticate': header } });
  }

  /** @throws the challenge when `principal` must authenticate again first. */
  async require(principal: Principal, { evenWithoutFactor = false } = {}): Promise<void> {
    if (principal.type !== 'user' || !principal.auth) return;
    const { amr, authTime } = principal.auth;
    const fresh = this.deps.clock.now() - authTime <= this.deps.maxAgeS * 1000;
    const hasFactor = await this.deps.factors.hasActive(principal.user.id);
    if (hasFactor) {
      if (!fresh || !amr.some((m) => STRONG.has(m))) throw this.challenge();
    } else if ((evenWithoutFactor || this.deps.allUsers) && !fresh) {
      throw this.challenge();
    }
  }

  /**
   * Attaches the check to every listed operation declared after this call, after its guard and
   * before its body is validated: the guard leaves the decision of these operations to it
   * (`rz_auth_decisions_total` counts one per request), so it counts `ok` or the challenge.
   */
  register(app: FastifyInstance, decisions: AuthDecisions | null = null): void {
    app.addHook('onRoute', (route) => {
      const id = route.config?.operationId;
      if (id === undefined || !STEP_UP_OPERATIONS.has(id)) return;
      const check = async (request: FastifyRequest) => {
        const principal = request.principal;
        if (!principal) return;
        try {
          if (principal.type !== 'service') await this.require(principal);
        } catch (error) {
          if (error instanceof ProblemError && error.code === 'insufficient_user_authentication') decisions?.decided(principal.type, 'insufficient_user_authentication');
          throw error;
        }
        decisions?.decided(principal.type, 'ok');
      };
      route.preValidation = [...[route.preValidation ?? []].flat(), check];
    });
  }
}
