import { randomUUID } from 'node:crypto';
import { type AuditDraft, type AuditEvent, auditEvent, type RequestContext } from '../../audit/events.js';
import type { Principal } from '../../auth/principal.js';
import type { ChangeFeed } from '../../changes/feed.js';
import { type Clock, iso } from '../../clock.js';
import { notFound, ProblemError, validationFailed } from '../../errors.js';
import { isUuid } from '../../lib/ids.js';
import { cleanLabel } from '../../lib/text.js';
import { sessionsEnded } from '../security-service.js';
import { revokeAndRecord } from '../session-store.js';
import type { MfaConfig } from './config.js';
import type { MfaEvents } from './mfa-events.js';
import type { FactorStore, FactorSummary, FactorWrites } from './factor-store.js';
import type { MfaRequirement } from './requirement.js';
import { type RecoveryCodeStore, replaceRecoveryCodes } from './recovery-code-store.js';
import { newRecoveryCodes, recoveryCodeDigests } from './recovery-codes.js';
import type { SecondFactor } from './second-factor.js';
import type { StepUp } from './step-up.js';
import { confirmTotp, type TotpDeps } from './totp-check.js';
import { newTotpSecret, otpauthUri } from './totp.js';

/** Contract §12.3: an enrolment waits 15 minutes for its first code; at most 10 authenticator apps. */
const PENDING_MS = 15 * 60_000;
const MAX_TOTP = 10;
const MAX_NAME = 60;

/** A factor's name as the user gave it, trimmed; refused with the field when it holds controls or shows nothing. */
export function factorName(name: string): string {
  const label = cleanLabel(name, 'name', MAX_NAME);
  if (typeof label !== 'string') throw validationFailed([label]);
  return label;
}

export interface FactorServiceDeps {
  readonly config: MfaConfig;
  readonly factors: FactorStore;
  readonly totp: TotpDeps;
  readonly recoveryCodes: RecoveryCodeStore;
  readonly requirement: MfaRequirement;
  readonly secondFactor: SecondFactor;
  readonly stepUp: StepUp;
  readonly feed: ChangeFeed;
  /** The events the user also hears of by webhook and mail (contract §12.8). */
  readonly events: MfaEvents;
  readonly clock: Clock;
}

/** A factor's activation: its writes, given the factor, and the first recovery codes it brings. */
export interface Activation {
  readonly writes: (factor: { readonly type: FactorSummary['type']; readonly name: string }) => FactorWrites;
  readonly recoveryCodes: string[] | undefined;
}

/** A user's factors and recovery codes (contract §12.3). Every write needs a recent login (§12.5), also from a user without a factor. */
export class FactorService {
  constructor(private readonly deps: FactorServiceDeps) {}

  async list(principal: Principal): Promise<{ factors: FactorSummary[]; remaining: number; requiredBy: string | null }> {
    const userId = principal.user.id;
    const factors = await this.deps.factors.list(userId);
    return { factors, remaining: await this.deps.recoveryCodes.remaining(userId), requiredBy: await this.deps.requirement.requiredBy(userId, factors.length > 0) };
  }

  /** Starts an authenticator app: the secret is shown once, here. */
  async startTotp(principal: Principal): Promise<{ factorId: string; secret: string; uri: string }> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    if (!this.deps.totp.secrets.enabled) throw new ProblemError('forbidden', { detail: 'Authenticator apps are off on this server (no MFA_ENCRYPTION_KEY).' });
    const now = this.deps.clock.now();
    const id = randomUUID();
    const secret = newTotpSecret();
    const sealedSecret = this.deps.totp.secrets.seal(id, secret);
    await this.deps.totp.store.insertPending({ id, userId: principal.user.id, name: 'Authenticator app', sealedSecret, createdAt: iso(now), pendingUntil: iso(now + PENDING_MS) });
    return { factorId: id, secret, uri: otpauthUri(this.deps.config.totpIssuer, principal.user.username, secret) };
  }

  /** Confirms an enrolment with its first code; the user's first factor comes with the first set of recovery codes. */
  async confirmTotp(principal: Principal, factorId: string, code: string, name: string | undefined, context: RequestContext): Promise<{ factor: FactorSummary; recoveryCodes?: string[] }> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    // A malformed id is nobody's factor; the store is never asked (PostgreSQL refuses a NUL in text).
    if (!isUuid(factorId)) throw notFound();
    const label = name === undefined ? null : factorName(name);
    const userId = principal.user.id;
    const first = !(await this.deps.factors.hasActive(userId));
    const activation = this.activation(userId, first, context);
    await this.deps.secondFactor.guarded(userId, 'totp', context, async (now) => {
      const outcome = await confirmTotp(this.deps.totp, userId, factorId, code, label, now, MAX_TOTP, (factor) => activation.writes({ type: 'totp', name: factor.name }));
      if (outcome === 'malformed' || outcome === 'mismatch') return { refusal: outcome };
      if (outcome === 'gone') throw notFound();
      if (outcome === 'cap') throw new ProblemError('conflict', { detail: `At most ${MAX_TOTP} authenticator apps per account.` });
      return {};
    });
    return this.added(userId, factorId, activation);
  }

  /**
   * What a factor's activation (an authenticator app confirmed, a WebAuthn credential registered)
   * writes in its own transaction: the audit event `mfa.factor_added` with its notice and, with the
   * user's first factor, the first set of recovery codes, held in `recoveryCodes` to be shown once.
   */
  activation(userId: string, first: boolean, context: RequestContext): Activation {
    const recoveryCodes = first ? newRecoveryCodes() : undefined;
    const subject = { type: 'user', id: userId } as const;
    return {
      recoveryCodes,
      writes: (factor) => async (trx) => {
        const events = [this.event({ type: 'mfa.factor_added', userId, subject, details: { method: factor.type, name: factor.name } }, context)];
        if (recoveryCodes) {
          await replaceRecoveryCodes(trx, userId, recoveryCodeDigests(recoveryCodes), iso(this.deps.clock.now()));
          events.push(this.event({ type: 'mfa.recovery_codes_generated', userId, subject }, context));
        }
        // The first set comes with a factor, whose notice says enough.
        await this.deps.events.record(events, userId, 'mfa_factor_added', { factor_name: factor.name }, trx);
      },
    };
  }

  /** The factor an activation added, with the first recovery codes when it brought them. */
  async added(userId: string, factorId: string, activation: Activation): Promise<{ factor: FactorSummary; recoveryCodes?: string[] }> {
    const factor = (await this.deps.factors.list(userId)).find((f) => f.id === factorId);
    if (!factor) throw notFound();
    return activation.recoveryCodes ? { factor, recoveryCodes: activation.recoveryCodes } : { factor };
  }

  async rename(principal: Principal, id: string, name: string): Promise<FactorSummary> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    if (!isUuid(id)) throw notFound();
    if (!(await this.deps.factors.rename(principal.user.id, id, factorName(name)))) throw notFound();
    const factor = (await this.deps.factors.list(principal.user.id)).find((f) => f.id === id);
    if (!factor) throw notFound();
    return factor;
  }

  /** Removes a factor and ends every other session of the user (contract §12.3). */
  async remove(principal: Principal, id: string, context: RequestContext): Promise<void> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    if (!isUuid(id)) throw notFound();
    const userId = principal.user.id;
    const name = (await this.deps.factors.list(userId)).find((f) => f.id === id)?.name ?? '';
    const now = this.deps.clock.now();
    let ended: string[] = [];
    const outcome = await this.deps.factors.remove(userId, id, this.deps.config.required, async (trx) => {
      ended = await revokeAndRecord(trx, userId, iso(now), { except: principal.credentialId }, (revoked) => sessionsEnded(userId, revoked, 'factor_removed', context, now));
      const removed = this.event({ type: 'mfa.factor_removed', userId, subject: { type: 'user', id: userId }, details: { sessions_ended: ended.length } }, context);
      await this.deps.events.record(removed, userId, 'mfa_factor_removed', { factor_name: name }, trx);
    });
    if (outcome === 'absent') throw notFound();
    if (outcome === 'last') throw new ProblemError('conflict', { detail: 'A second factor is required on this server: add another before removing the last.' });
    // Every instance drops the ended sessions from its caches before this returns.
    if (ended[0] !== undefined) await this.deps.feed.committed('session', ended[0]);
  }

  /** A new set of recovery codes, shown once; the old set stops working in the transaction that records the regeneration. */
  async regenerate(principal: Principal, context: RequestContext): Promise<string[]> {
    await this.deps.stepUp.require(principal, { evenWithoutFactor: true });
    const userId = principal.user.id;
    const codes = newRecoveryCodes();
    const event = this.event({ type: 'mfa.recovery_codes_generated', userId, subject: { type: 'user', id: userId } }, context);
    await this.deps.recoveryCodes.replace(userId, recoveryCodeDigests(codes), iso(this.deps.clock.now()), (trx) => this.deps.events.record(event, userId, 'mfa_recovery_codes_generated', {}, trx));
    return codes;
  }

  private event(draft: AuditDraft, context: RequestContext): AuditEvent {
    return auditEvent({ actor: { type: 'user', id: draft.userId }, ...draft }, context, this.deps.clock.now());
  }
}
