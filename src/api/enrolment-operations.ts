/**
 * The operations a user token with the enrolment audience may call (contract §12.7), for the guard
 * (src/http/guard.ts) and the document alike: every other operation a user token can call may answer
 * `403 mfa_enrollment_required`, and the document says so.
 */
export const ENROLMENT_OPERATIONS: ReadonlySet<string> = new Set([
  'getMe',
  'logOut',
  'listSecondFactors',
  'createTotpFactor',
  'updateTotpFactorConfirmed',
  'updateSecondFactor',
  'deleteSecondFactor',
  'createRecoveryCodes',
  'createWebAuthnRegistrationOptions',
  'registerWebAuthnFactor',
]);
