/**
 * The operations of contract §12.5 that mint or widen credentials or weaken the account: on them a
 * user token must be recent and, for a user with a second factor, carry it (RFC 9470 step-up,
 * src/account/mfa/step-up.ts). Here so that the document lists their challenge too.
 */
export const STEP_UP_OPERATIONS: ReadonlySet<string> = new Set([
  'createApiToken',
  'rotateToken',
  'registerApp',
  'issueAppToken',
  'createWebhook',
  'deleteWebhook',
  'updatePassword',
  'deleteMe',
  'approveDeviceRequest',
]);
