import { type Clock, DAY_MS, iso } from '../../clock.js';
import type { MfaConfig } from './config.js';
import type { FactorStore } from './factor-store.js';
import type { MfaUserStore } from './mfa-user-store.js';

/**
 * MFA_REQUIRED (contract §12.7): a user without a factor may keep working for MFA_GRACE_DAYS from
 * the moment the requirement first applied to them (stored once), then logs in to a token good
 * only for enrolment.
 */
export class MfaRequirement {
  constructor(
    private readonly deps: { readonly config: Pick<MfaConfig, 'required' | 'graceDays'>; readonly factors: FactorStore; readonly mfaUsers: MfaUserStore; readonly clock: Clock },
  ) {}

  /** Whether anything is required at all: off, no lookup is ever made. */
  get on(): boolean {
    return this.deps.config.required;
  }

  /** Until when the user may work without a factor; null when nothing is required of them (off, or a factor in place). */
  async requiredBy(userId: string, hasFactor?: boolean): Promise<string | null> {
    if (!this.deps.config.required || (hasFactor ?? (await this.deps.factors.hasActive(userId)))) return null;
    const since = await this.deps.mfaUsers.requiredSince(userId, iso(this.deps.clock.now()));
    return iso(Date.parse(since) + this.deps.config.graceDays * DAY_MS);
  }

  /** True when the user's grace is over and they have no factor: their login gets the enrolment audience. */
  async enrolmentDue(userId: string, hasFactor?: boolean): Promise<boolean> {
    const by = await this.requiredBy(userId, hasFactor);
    return by !== null && Date.parse(by) <= this.deps.clock.now();
  }
}
