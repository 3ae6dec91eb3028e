import type { Kysely } from 'kysely';
import type { AuditStore } from '../../audit/store.js';
import { type Clock, iso } from '../../clock.js';
import type { Tables } from '../../db/tables.js';
import type { Sweep } from '../../maintenance/runner.js';
import type { UserTokens } from '../../auth/jwt.js';
import type { PasswordHasher } from '../password-hasher.js';
import type { SessionStore } from '../session-store.js';
import type { UserStore } from '../user-store.js';
import type { ChangeFeed } from '../../changes/feed.js';
import { type MfaVerificationCount, NO_MFA_COUNT } from '../../observability/metrics/mfa.js';
import { FactorService } from './factor-service.js';
import { MfaEvents, type MfaNotice } from './mfa-events.js';
import { SqlMfaUserStore } from './mfa-user-store.js';
import { MfaRequirement } from './requirement.js';
import { MfaOperatorReset } from './operator-reset.js';
import { Reauth } from './reauth.js';
import { StepUp } from './step-up.js';
import { SqlChallengeStore } from './challenge-store.js';
import type { MfaConfig } from './config.js';
import { SqlFactorStore } from './factor-store.js';
import { SqlLockoutStore } from './lockout-store.js';
import { MfaLogin } from './login-service.js';
import { SqlPendingLoginStore } from './pending-login-store.js';
import { SqlRecoveryCodeStore } from './recovery-code-store.js';
import { SecondFactor } from './second-factor.js';
import { resealTotpSecrets } from './totp-reseal.js';
import { TotpSecrets } from './totp-secrets.js';
import { SqlTotpStore } from './totp-store.js';
import { PasskeyLogin } from './passkey-login.js';
import { WebAuthnAssertions } from './webauthn-check.js';
import { WebAuthnEnrolment } from './webauthn-enrolment.js';
import { SqlWebAuthnStore } from './webauthn-store.js';

/** Second factors as the rest of the service sees them (contract §12). */
export interface Mfa {
  /** Login in two steps: the gate of the password login and `POST /api/auth/mfa/verify`. */
  readonly login: MfaLogin;
  /** RFC 9470 step-up on the routes of contract §12.5. */
  readonly stepUp: StepUp;
  /** `POST /api/auth/reauth`: a fresh token for the same session. */
  readonly reauth: Reauth;
  /** The user's factors and recovery codes (`/api/me/mfa`). */
  readonly factors: FactorService;
  /** Adding a passkey or security key (`/api/me/mfa/webauthn`). */
  readonly webauthn: WebAuthnEnrolment;
  /** Login with a passkey alone (`/api/auth/passkey`). */
  readonly passkey: PasskeyLogin;
  /** MFA_REQUIRED: `GET /api/me`'s `mfa.required_by`. */
  readonly requirement: MfaRequirement;
  /** `rz-auth users mfa-reset`. */
  readonly operatorReset: MfaOperatorReset;
  /** Clean-ups for the maintenance loop: waiting logins, WebAuthn challenges and unconfirmed enrolments past their time. */
  readonly sweeps: readonly Sweep[];
}

export interface MfaDeps {
  readonly db: Kysely<Tables>;
  readonly config: MfaConfig;
  readonly users: UserStore;
  readonly audit: AuditStore;
  readonly clock: Clock;
  readonly hasher: PasswordHasher;
  readonly sessions: SessionStore;
  readonly userTokens: UserTokens;
  readonly feed: ChangeFeed;
  /** Counts each second-factor check when metrics are on. */
  readonly count?: MfaVerificationCount;
  /** Mails the user the notices of second-factor changes; null while mail is off. */
  readonly notice: MfaNotice | null;
}

/**
 * Builds the second-factor services. Every stored TOTP secret is opened first, and those under
 * MFA_ENCRYPTION_KEY_OLD sealed again (docs/mfa.md): a secret no configured key opens refuses the
 * start, naming the factor, rather than failing that user's logins one by one.
 */
export async function createMfa({ db, config, users, audit, clock, hasher, sessions, userTokens, feed, notice, count = NO_MFA_COUNT }: MfaDeps): Promise<Mfa> {
  const totpStore = new SqlTotpStore(db);
  const secrets = new TotpSecrets(config.encryption);
  await resealTotpSecrets(totpStore, secrets);
  const factors = new SqlFactorStore(db);
  const recoveryCodes = new SqlRecoveryCodeStore(db);
  const pending = new SqlPendingLoginStore(db);
  const challenges = new SqlChallengeStore(db);
  const totp = { store: totpStore, secrets };
  const events = new MfaEvents(db, notice);
  const mfaUsers = new SqlMfaUserStore(db);
  const requirement = new MfaRequirement({ config, factors, mfaUsers, clock });
  const credentials = new SqlWebAuthnStore(db);
  const assertions = new WebAuthnAssertions({ rp: config.webauthn, challenges, credentials, mfaUsers, audit, clock });
  const secondFactor = new SecondFactor({ totp, recoveryCodes, lockout: new SqlLockoutStore(db), webauthn: assertions, audit, events, clock, count });
  const stepUp = new StepUp({ factors, clock, maxAgeS: config.reauthMaxAgeS, allUsers: config.stepUpAllUsers });
  const factorService = new FactorService({ config, factors, totp, recoveryCodes, requirement, secondFactor, stepUp, feed, events, clock });
  return {
    factors: factorService,
    webauthn: new WebAuthnEnrolment({ rp: config.webauthn, assertions, challenges, credentials, mfaUsers, factors, factorService, stepUp, clock }),
    passkey: new PasskeyLogin({ assertions, users, audit, clock }),
    operatorReset: new MfaOperatorReset({ factors, users, events, feed, clock }),
    login: new MfaLogin({ factors, recoveryCodes, pending, secondFactor, assertions, users, audit, events, requirement, clock }),
    stepUp,
    requirement,
    reauth: new Reauth({ secondFactor, assertions, factors, users, hasher, sessions, userTokens, audit, events, clock, feed }),
    sweeps: [
      { name: 'waiting second-factor logins', run: (now) => pending.deleteExpired(iso(now)) },
      { name: 'WebAuthn challenges', run: (now) => challenges.deleteExpired(iso(now)) },
      { name: 'unconfirmed authenticator apps', run: (now) => factors.deleteExpiredPending(iso(now)) },
    ],
  };
}
