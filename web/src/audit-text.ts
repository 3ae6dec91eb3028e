import type { AuditActor, AuditEvent } from './api-security.js';

/*
 * The audit log in words: what each event type means to the person whose log it is in
 * (docs/audit-log.md says when each is recorded). Built as plain strings, shown as text nodes.
 */

/**
 * The types a user's log can hold, in the order the filter offers them, with their label. The
 * operator-only types (signing keys, service credentials) never reach a user's log.
 */
export const EVENT_TYPES: ReadonlyArray<readonly [type: string, label: string]> = [
  ['login.succeeded', 'Logins'],
  ['login.failed', 'Failed logins'],
  ['session.logged_out', 'Logouts'],
  ['session.revoked', 'Sessions ended'],
  ['password.changed', 'Password changes'],
  ['token.created', 'Tokens created'],
  ['token.updated', 'Tokens changed'],
  ['token.rotated', 'Tokens rotated'],
  ['token.revoked', 'Tokens revoked'],
  ['token.expired', 'Rotated tokens ended'],
  ['token.idle_revoked', 'Unused tokens revoked'],
  ['token.refused', 'Requests refused by a token’s networks'],
  ['token.leaked', 'Tokens reported leaked'],
  ['token.expiring', 'Tokens about to expire'],
  ['app.registered', 'Apps registered'],
  ['app.deleted', 'Apps deleted'],
  ['user.signed_up', 'Sign-up'],
  ['user.created', 'Account created by the operator'],
  ['webhook.created', 'Webhook endpoints added'],
  ['webhook.deleted', 'Webhook endpoints deleted'],
  ['webhook.paused', 'Webhook endpoints paused after failures'],
  ['webhook.resumed', 'Webhook endpoints resumed'],
];

/** Labels of the types a user's log never shows but a webhook may still be offered. */
const OTHER_LABELS: Readonly<Record<string, string>> = {
  'user.deleted': 'Account deleted',
  'keys.rotated': 'Signing keys rotated (operator)',
  'service_credential.created': 'Service credentials created (operator)',
  'service_credential.revoked': 'Service credentials revoked (operator)',
};
const LABELS = new Map([...EVENT_TYPES, ...Object.entries(OTHER_LABELS)]);

/** What an event type is called on the page: "Logins" for `login.succeeded`; the type itself if unknown. */
export const typeLabel = (type: string): string => LABELS.get(type) ?? type;

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
};

/** What happened, in one sentence. */
export function describeEvent(event: AuditEvent): string {
  const d = event.details;
  switch (event.type) {
    case 'user.signed_up':
      return 'You signed up';
    case 'user.created':
      return 'The operator created your account';
    case 'user.deleted':
      return 'The account was deleted';
    case 'login.succeeded':
      return 'Logged in';
    case 'login.failed':
      return 'Failed login: wrong password';
    case 'session.logged_out':
      return 'Logged out';
    case 'session.revoked':
      return SESSION_ENDED[d.reason ?? ''] ?? 'A session was ended';
    case 'password.changed':
      return `Password changed${d.sessions_ended === undefined ? '' : `; ${plural(d.sessions_ended, 'other session')} ended`}`;
    case 'token.created':
      return `${tokenName(event)} created${d.scopes && d.scopes.length > 0 ? ` with ${d.scopes.join(', ')}` : ''}`;
    case 'token.updated':
      return updateText(event);
    case 'token.rotated':
      return `${tokenName(event)} rotated: ${graceText(d.grace_seconds)}`;
    case 'token.revoked':
      return d.reason === 'rotated_again' ? `${tokenName(event)} revoked because its replacement was rotated again` : `${tokenName(event)} revoked`;
    case 'token.expired':
      return `${tokenName(event)} ended: its rotation grace period was over`;
    case 'token.idle_revoked':
      return `${tokenName(event)} revoked after ${plural(d.idle_days ?? 0, 'day')} unused`;
    case 'token.refused':
      return `${tokenName(event)}: ${plural(d.refusals ?? 1, 'request')} refused by its networks`;
    case 'token.leaked':
      return `${tokenName(event)} reported leaked${leakSource(d)} and revoked`;
    case 'token.expiring':
      return `${tokenName(event)} expires in ${plural(d.days ?? 0, 'day')}`;
    case 'app.registered':
      return `App${d.name === undefined ? '' : ` “${d.name}”`} registered`;
    case 'app.deleted':
      return `App${d.name === undefined ? '' : ` “${d.name}”`} deleted`;
    case 'webhook.created':
      return `Webhook endpoint added${endpointText(event)}`;
    case 'webhook.deleted':
      return `Webhook endpoint deleted${endpointText(event)}`;
    case 'webhook.paused':
      return `Webhook endpoint paused after ${plural(d.consecutive_failures ?? 0, 'failed attempt')} in a row`;
    case 'webhook.resumed':
      return 'Webhook endpoint resumed: a delivery succeeded';
    default:
      return event.type;
  }
}

/** Who reported a leak, claiming only what the service checked: GitHub's signature, or nothing. */
function leakSource(d: AuditEvent['details']): string {
  if (d.report_format !== 'github') return '';
  return d.verified === true ? ' by GitHub secret scanning (signature verified)' : " (reported in GitHub's format, not verified)";
}

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
