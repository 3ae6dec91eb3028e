import type { AuditActor, AuditDetails, AuditEvent, AuditType } from './api-security.js';

/*
 * The audit log in words: what each event type means to the person whose log it is in
 * (docs/audit-log.md says when each is recorded). Built as plain strings, shown as text nodes.
 * Every table here is keyed by the document's own list of types (types/openapi.d.ts), so a type
 * added to the API fails the page's typecheck until it has its label and its sentence.
 */

/**
 * What each type is called, in the order the filter offers them, and whether a user's log can hold
 * it: the operator-only types (signing keys, service credentials) never reach one, but a webhook
 * may still be offered them.
 */
const TYPES: Readonly<Record<AuditType, readonly [label: string, inUserLog: boolean]>> = {
  'login.succeeded': ['Logins', true],
  'login.failed': ['Failed logins', true],
  'login.password_ok_mfa_pending': ['Right passwords awaiting a second factor', true],
  'mfa.challenge_failed': ['Failed second factors', true],
  'mfa.recovery_code_used': ['Recovery codes used', true],
  'mfa.locked': ['Second factor locked after failures', true],
  'mfa.clone_suspected': ['Security key possibly copied', true],
  'auth.reauth': ['Re-authentications', true],
  'mfa.factor_added': ['Second factors added', true],
  'mfa.factor_removed': ['Second factors removed', true],
  'mfa.recovery_codes_generated': ['Recovery codes generated', true],
  'mfa.reset_by_operator': ['Second factors reset by the operator', true],
  'session.logged_out': ['Logouts', true],
  'session.revoked': ['Sessions ended', true],
  'password.changed': ['Password changes', true],
  'password.reset_requested': ['Password resets asked for', true],
  'password.reset': ['Password resets', true],
  'email.verification_sent': ['Verification mails sent', true],
  'email.verified': ['Email verified', true],
  'email.change_requested': ['Email changes asked for', true],
  'email.changed': ['Email changes', true],
  'token.created': ['Tokens created', true],
  'token.updated': ['Tokens changed', true],
  'token.rotated': ['Tokens rotated', true],
  'token.revoked': ['Tokens revoked', true],
  'token.expired': ['Tokens expired', true],
  'token.idle_revoked': ['Unused tokens revoked', true],
  'token.refused': ['Requests refused by a token’s networks', true],
  'token.leaked': ['Tokens reported leaked', true],
  'token.expiring': ['Tokens about to expire', true],
  'app.registered': ['Apps registered', true],
  'app.deleted': ['Apps deleted', true],
  'user.signed_up': ['Sign-up', true],
  'user.created': ['Account created by the operator', true],
  'webhook.created': ['Webhook endpoints added', true],
  'webhook.deleted': ['Webhook endpoints deleted', true],
  'webhook.paused': ['Webhook endpoints paused after failures', true],
  'webhook.resumed': ['Webhook endpoints resumed', true],
  'device.approved': ['Device logins approved', true],
  'device.denied': ['Device logins denied', true],
  'device.requested': ['Device logins requested', false],
  'client.created': ['CLI clients registered (operator)', false],
  'client.disabled': ['CLI clients disabled (operator)', false],
  'client.enabled': ['CLI clients enabled (operator)', false],
  'mail.failed': ['Mails that could not be delivered', true],
  'user.deleted': ['Account deleted', false],
  'keys.rotated': ['Signing keys rotated (operator)', false],
  'service_credential.created': ['Service credentials created (operator)', false],
  'service_credential.revoked': ['Service credentials revoked (operator)', false],
};

/** Whether `value` (a form field's, say) names a type of the audit log. */
export const isAuditType = (value: string): value is AuditType => Object.hasOwn(TYPES, value);

/** The types a user's log can hold, in the order the filter offers them, with their label. */
export const EVENT_TYPES: ReadonlyArray<readonly [type: AuditType, label: string]> = Object.entries(TYPES)
  .filter(([, [, inUserLog]]) => inUserLog)
  .map(([type, [label]]) => [type as AuditType, label]);

/** What an event type is called on the page: "Logins" for `login.succeeded`. */
export const typeLabel = (type: AuditType): string => TYPES[type][0];

const TOKEN_KIND: Readonly<Record<string, string>> = { api_token: 'API token', app_token: 'App token', service_credential: 'Service credential' };

/** "API token “deploy”", "App token rza_…x7Qa", "Token". */
function tokenName(event: AuditEvent): string {
  const kind = TOKEN_KIND[event.details.token_type ?? ''] ?? 'Token';
  return event.details.name === undefined ? kind : `${kind} “${event.details.name}”`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function graceText(seconds: number | undefined): string {
  if (seconds === undefined || seconds === 0) return 'the old value stopped working at once';
  if (seconds % 86_400 === 0) return `the old value works for ${plural(seconds / 86_400, 'more day')}`;
  if (seconds % 3600 === 0) return `the old value works for ${plural(seconds / 3600, 'more hour')}`;
  return `the old value works for ${plural(Math.ceil(seconds / 60), 'more minute')}`;
}

function updateText(event: AuditEvent): string {
  const { name, scopes, allowed_cidrs: cidrs } = event.details;
  const changes = [
    name === undefined ? null : `renamed to “${name}”`,
    scopes === undefined ? null : `narrowed to ${scopes.length === 0 ? 'no scopes' : scopes.join(', ')}`,
    cidrs === undefined ? null : `limited to ${cidrs.join(', ')}`,
  ].filter((c) => c !== null);
  const kind = TOKEN_KIND[event.details.token_type ?? ''] ?? 'Token';
  return changes.length === 0 ? `${kind} changed` : `${kind} ${changes.join('; ')}`;
}

/** " on https://hooks.example.com for 3 event types": the log keeps the origin, never the path. */
function endpointText(event: AuditEvent): string {
  const { origin, event_types: types } = event.details;
  return `${origin === undefined ? '' : ` on ${origin}`}${types === undefined ? '' : ` for ${plural(types.length, 'event type')}`}`;
}

const SESSION_ENDED: Readonly<Record<string, string>> = {
  ended: 'A session was ended',
  others_ended: 'A session was ended with all other sessions',
  password_changed: 'A session was ended by a password change',
  password_reset: 'A session was ended by a password reset',
  email_changed: 'A session was ended by an email change',
  factor_removed: 'A session was ended when a second factor was removed',
  mfa_reset: 'A session was ended when the operator reset your second factors',
};

const EXPIRED: Readonly<Partial<Record<NonNullable<AuditDetails['reason']>, string>>> = {
  rotation_grace_ended: 'its rotation grace period was over',
  lifetime_ended: 'it reached its expiry date',
};

/** Who reported a leak, claiming only what the service checked: GitHub's signature, or nothing. */
function leakSource(d: AuditDetails): string {
  if (d.report_format !== 'github') return '';
  return d.verified === true ? ' by GitHub secret scanning (signature verified)' : " (reported in GitHub's format, not verified)";
}

const appName = (event: AuditEvent) => (event.details.name === undefined ? '' : ` “${event.details.name}”`);

/** Each type's sentence, from the event's details. */
const SENTENCES: Readonly<Record<AuditType, (event: AuditEvent) => string>> = {
  'user.signed_up': () => 'You signed up',
  'user.created': () => 'The operator created your account',
  'user.deleted': () => 'The account was deleted',
  'login.succeeded': () => 'Logged in',
  'login.failed': () => 'Failed login: wrong password',
  'login.password_ok_mfa_pending': () => 'Your password was entered correctly; the login waits for a second factor',
  'mfa.challenge_failed': ({ details: d }) => (d.reason === 'replayed' ? 'Failed second factor: a code that was already used' : 'Failed second factor: wrong code'),
  'mfa.recovery_code_used': ({ details: d }) => `Logged in with a recovery code${d.recovery_codes_remaining === undefined ? '' : `; ${plural(d.recovery_codes_remaining, 'code')} left`}`,
  'mfa.locked': () => 'Second-factor checks locked for 15 minutes after 10 failures',
  'mfa.clone_suspected': () => 'A passkey or security key was refused: its signature counter went backwards, so it may have been copied',
  'mfa.factor_added': ({ details: d }) => `Authenticator app${d.name === undefined ? '' : ` “${d.name}”`} added as a second factor`,
  'mfa.factor_removed': ({ details: d }) => `A second factor was removed${d.sessions_ended === undefined ? '' : `; ${plural(d.sessions_ended, 'other session')} ended`}`,
  'mfa.recovery_codes_generated': () => 'New recovery codes generated; the previous ones stopped working',
  'mfa.reset_by_operator': () => 'The operator removed every second factor and recovery code, and ended every session',
  'auth.reauth': () => 'You confirmed it was you, for an action that needs a recent login',
  'session.logged_out': () => 'Logged out',
  'session.revoked': ({ details: d }) => SESSION_ENDED[d.reason ?? ''] ?? 'A session was ended',
  'password.changed': ({ details: d }) => `Password changed${d.sessions_ended === undefined ? '' : `; ${plural(d.sessions_ended, 'other session')} ended`}`,
  'token.created': (event) => `${tokenName(event)} created${event.details.scopes && event.details.scopes.length > 0 ? ` with ${event.details.scopes.join(', ')}` : ''}`,
  'token.updated': updateText,
  'token.rotated': (event) => `${tokenName(event)} rotated: ${graceText(event.details.grace_seconds)}`,
  'token.revoked': (event) => (event.details.reason === 'rotated_again' ? `${tokenName(event)} revoked because its replacement was rotated again` : `${tokenName(event)} revoked`),
  // A token ends at the end of a rotation's grace or at its own expiry: details.reason says which.
  'token.expired': (event) => {
    const why = event.details.reason === undefined ? undefined : EXPIRED[event.details.reason];
    return `${tokenName(event)} expired${why === undefined ? '' : `: ${why}`}`;
  },
  'token.idle_revoked': (event) => `${tokenName(event)} revoked after ${plural(event.details.idle_days ?? 0, 'day')} unused`,
  'token.refused': (event) => `${tokenName(event)}: ${plural(event.details.refusals ?? 1, 'request')} refused by its networks`,
  'token.leaked': (event) => `${tokenName(event)} reported leaked${leakSource(event.details)} and revoked`,
  'token.expiring': (event) => `${tokenName(event)} expires in ${plural(event.details.days ?? 0, 'day')}`,
  'app.registered': (event) => `App${appName(event)} registered`,
  'app.deleted': (event) => `App${appName(event)} deleted`,
  'keys.rotated': () => 'Signing keys rotated',
  'service_credential.created': () => 'Service credential created',
  'service_credential.revoked': () => 'Service credential revoked',
  'webhook.created': (event) => `Webhook endpoint added${endpointText(event)}`,
  'webhook.deleted': (event) => `Webhook endpoint deleted${endpointText(event)}`,
  'webhook.paused': ({ details: d }) => `Webhook endpoint paused after ${plural(d.consecutive_failures ?? 0, 'failed attempt')} in a row`,
  'webhook.resumed': () => 'Webhook endpoint resumed: a delivery succeeded',
  'device.approved': ({ details: d }) => `Device login approved for ${String(d.client_id ?? 'a CLI')} on ${String(d.device_name ?? 'an unnamed device')} (the name is the device's own)`,
  'device.denied': ({ details: d }) => `Device login denied for ${String(d.client_id ?? 'a CLI')}`,
  'device.requested': () => 'Device login requested',
  'client.created': () => 'CLI client registered',
  'client.disabled': () => 'CLI client disabled',
  'client.enabled': () => 'CLI client enabled',
  'password.reset_requested': () => 'A password reset link was asked for',
  'password.reset': ({ details: d }) => `Password reset with a mailed link${d.sessions_ended === undefined ? '' : `; ${plural(d.sessions_ended, 'session')} ended`}`,
  'email.verification_sent': () => 'A verification link was mailed',
  'email.verified': () => 'Email address verified',
  'email.change_requested': () => 'An email change was asked for; a confirmation link was mailed to the new address',
  'email.changed': ({ details: d }) => `Email address changed${d.sessions_ended === undefined ? '' : `; ${plural(d.sessions_ended, 'other session')} ended`}`,
  'mail.failed': () => 'A mail to your address could not be delivered after a day of retries',
};

/** What happened, in one sentence; the type itself for one this page does not know (a newer server). */
export const describeEvent = (event: AuditEvent): string => (isAuditType(event.type) ? SENTENCES[event.type](event) : event.type);

/** Who did it, as the signed-in person reads it. */
export function describeActor(actor: AuditActor, userId: string): string {
  switch (actor.type) {
    case 'user':
      return actor.id === userId ? 'You (logged in)' : 'A user';
    case 'api_token':
      return 'One of your API tokens';
    case 'app_token':
      return 'An app token of one of your apps';
    case 'anonymous':
      return 'Someone without a credential';
    case 'operator':
      return 'The operator (rz-auth command line)';
    case 'system':
      return 'rz-auth itself';
  }
}

/** "rz_…x7Qa" for a token, the subject's kind and id otherwise. */
export function describeSubject(event: AuditEvent): string | null {
  const hint = event.details.hint;
  if (hint !== undefined) return hint.replace(/^(rz[as]?_)/, '$1…');
  if (event.subject === null) return null;
  return `${event.subject.type.replace('_', ' ')} ${event.subject.id}`;
}
